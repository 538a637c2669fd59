// One core's worth of competing work for `bench:datapath --contended`: spins until killed. Plain arithmetic, no
// allocation and no system calls, so it takes CPU time and nothing else (no memory bandwidth, no I/O).
let counter = 0;
for (;;) counter = (counter + 1) % 1_000_000_007;
