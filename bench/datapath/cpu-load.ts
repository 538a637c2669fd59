// The fixed CPU load of `bench:datapath --contended`: one busy-loop process per core, started before the first
// step and stopped after the last, so every tool's every step runs while the same load competes for the cores.
// A data mover runs beside the workloads of its node; this measures how each tool fares when it does not have
// the CPU to itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface CpuLoad {
  processes: number;
  pids: number[];
  stop(): Promise<void>;
}

const busyLoop = fileURLToPath(new URL('./busy-loop.ts', import.meta.url));

export function startCpuLoad(processes: number): CpuLoad {
  const children: ChildProcess[] = [];
  for (let i = 0; i < processes; i++) {
    children.push(spawn(process.execPath, [...process.execArgv, busyLoop], { stdio: 'ignore' }));
  }
  return {
    processes,
    pids: children.map((c) => c.pid ?? 0),
    async stop() {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolveExit) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolveExit();
              child.once('exit', () => resolveExit());
              child.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}

/** "load average 21.3 / 24.0 / 27.9" (1, 5, 15 minutes). */
export function loadAverageText(): string {
  return `load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ')}`;
}
