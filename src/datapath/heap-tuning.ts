/**
 * V8 heap settings for the time a backup or a restore runs: they keep memory flat however many files a volume holds,
 * and keep the garbage collector from running a full GC every few dozen milliseconds. Both are V8 flags set at run
 * time, which are process-wide (every isolate of the process shares them), hence the count of active holders: the
 * defaults come back when the last backup or restore in the process ends.
 *
 * A restore allocates as a backup does (a few short-lived objects per file, every pack read's buffers): left to
 * V8's defaults its young generation grew to ~100 MB and the restore of the 1 GB real-tree benchmark set peaked at
 * 415 MiB RSS; with these settings at 383 MiB, for the same CPU (farm-bench, 7 pairs; docs/datapath.md). The kopia
 * reader's restores hold them too: there they took 0.9x the CPU.
 *
 * Young generation. V8 doubles the young generation (its two semi-spaces) whenever, over time, the bytes that
 * survived scavenges exceed its size. A backup of a million small files allocates a few short-lived objects per file,
 * so the bytes that survive add up over a long run and the young generation grows step by step (16 → 32 → 64 → 128
 * MB of committed heap), which shows as RSS rising with the file count. Nothing in a backup needs a large young
 * generation: what survives a scavenge is a directory's listing at most. `--max-semi-space-size` would bound it, but
 * only on the command line, before the heap exists. What V8 reads at every growth is `--semi-space-growth-factor`,
 * so this sets it to 1 (no growth) once the young generation has reached the bound.
 *
 * External memory. Every ArrayBuffer that arrives from a worker thread (batch slabs, chunk segments, named packs:
 * ~3.4 GB for a backup of 1.2 GB) counts as newly allocated external memory in the receiving isolate, and by default V8
 * starts a full GC each time 64 MB more of it was reported: 57 full GCs of the main isolate in a 2.5 s backup, though
 * its heap held 10 MB. `--external-memory-accounted-in-global-limit` makes V8 weigh external memory within its global
 * limit instead, which grows with the heap: 2-16 full GCs, and the whole backup took 16 % less CPU (farm-bench, 5
 * pairs: 4.56 → 3.89 CPU-s with the CLI's start and key derivation) for ~20-30 MB more peak RSS.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
// The one string vm evaluates is the name `gc`, to reach the collector --expose-gc exposes to new contexts only.
// eslint-disable-next-line no-restricted-syntax
import { runInNewContext } from 'node:vm';

/**
 * Young generation size from which growth stops: Node 24 starts with 16 MiB (two 8 MiB semi-spaces) and grows it up to
 * 128 MiB. At 16 MiB a backup of 1M tiny files kept its RSS flat (+1 % from 250k to 1M files) and took no more CPU.
 */
const MAX_NEW_SPACE_BYTES = 16 << 20;
/** V8's default growth factor (flag-definitions.h), restored when no backup holds the cap. */
const DEFAULT_GROWTH_FACTOR = 2;

let holders = 0;
let capped = false;

function setExternalMemoryInGlobalLimit(on: boolean): void {
  setFlagsFromString(on ? '--external-memory-accounted-in-global-limit' : '--no-external-memory-accounted-in-global-limit');
}

function setGrowth(noGrowth: boolean): void {
  if (capped === noGrowth) return;
  capped = noGrowth;
  setFlagsFromString(`--semi-space-growth-factor=${noGrowth ? 1 : DEFAULT_GROWTH_FACTOR}`);
}

function newSpaceBytes(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_size;
  return 0;
}

export interface HeapTuning {
  /** Looks at the young generation's size and stops its growth once it reached the bound (cheap: a few µs). */
  check(): void;
  /** Ends this holder's settings; V8's defaults come back when no other holder remains. */
  release(): void;
}

/** How many backups and restores hold the settings now (0: V8's defaults). */
export function heapTuningHolders(): number {
  return holders;
}

/**
 * Starts the data path's settings for this process; call `check()` now and then (every ~1,000 files). A long-running server
 * holds them for its life as well: its backups and restores of tens of thousands of API objects allocate a few
 * short-lived objects per item, and its young generation grew to 128 MiB (heap 220 MB, RSS 312 MB at 2,500
 * namespaces) as a data mover's would.
 */
export function tuneHeapForDataPath(): HeapTuning {
  if (holders++ === 0) setExternalMemoryInGlobalLimit(true);
  let released = false;
  const cap: HeapTuning = {
    check() {
      if (released) return;
      // Below the bound growth stays allowed (a too small young generation promotes more garbage to the old one);
      // V8 may also shrink it on its own, after which it may grow back up to the bound.
      setGrowth(newSpaceBytes() >= MAX_NEW_SPACE_BYTES);
    },
    release() {
      if (released) return;
      released = true;
      holders--;
      if (holders === 0) {
        setGrowth(false);
        setExternalMemoryInGlobalLimit(false);
      }
    },
  };
  cap.check();
  return cap;
}

/**
 * For a long-running server: V8 grows the old generation by at most half of what survived each full GC before it
 * collects again. By default it lets the heap grow up to fourfold when its collector is fast, as it is on a heap
 * this size: heap snapshots of the server while it backed up and restored 37,500 API objects held 58-66 MB live
 * while its RSS peaked at 244-268 MB, the rest being garbage not yet collected. At 1.5x the same runs peaked at
 * 204-231 MB, for 1-3 CPU-s more in the backup and none in the restore (docs/benchmarks.md, "The control plane at
 * scale"). V8 reads the flag each time it sets the next limit; it is process-wide, so the data path's commands,
 * which favour speed, never set it.
 * (`--optimize-for-size` kept the peaks lower still, 177-196 MB, but cost the server ~25 % more CPU over whole runs.)
 */
const SERVER_HEAP_GROWING_PERCENT = 50;

export function limitHeapGrowthForServer(): void {
  setFlagsFromString(`--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`);
}

let exposedGc: ((options?: { type: 'minor' | 'major' }) => void) | undefined;

/** V8's collector, exposed by setting --expose-gc at run time, which gives it to new contexts only. */
function gcFunction(): (options?: { type: 'minor' | 'major' }) => void {
  if (!exposedGc) {
    setFlagsFromString('--expose-gc');
    exposedGc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
  }
  return exposedGc;
}

/**
 * Runs a minor GC (a scavenge of the young generation, ~1 ms). For code that makes buffers it drops at once, such as
 * the cipher's output when the main thread seals a batch itself: 160-190 MB of them in one backup of the mixed
 * dataset, which otherwise wait for the next GC (late, with external memory weighed in the global limit) and showed
 * as 20-50 MB of peak RSS. `gc` is exposed by setting --expose-gc at run time, which gives it to new contexts only.
 */
export function collectYoungGarbage(): void {
  gcFunction()({ type: 'minor' });
}

/**
 * Runs a full GC (mark-compact of the whole heap). For a long-running server once a large run (a backup or restore
 * of tens of thousands of items) has ended: V8 collects an unbounded heap late, so what the run left (parsed items,
 * response buffers, which hold their external memory until their wrappers die) would otherwise stay resident while
 * the server is idle. Costs a pause of tens to a few hundred milliseconds, once per run.
 */
export function collectAllGarbage(): void {
  gcFunction()({ type: 'major' });
}
