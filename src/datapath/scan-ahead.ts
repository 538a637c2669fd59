/**
 * Lists and lstat()s the directories a backup's walk will visit next, on a worker thread (scan-worker.ts), ahead of
 * the walk.
 *
 * Why: an unchanged re-run is mostly readdir and lstat (one system call per name) plus comparing with the parent
 * listing. Done on the main thread, that is one long serial chain, which on a busy node gets one thread's share of
 * the CPU. Done through libuv's thread pool (fs.lstat), each call costs the main thread more than the system call
 * itself: the request, the hand-over to a pool thread and the callback took ~1.05 CPU-s for the 57,000 names of the
 * real set, where plain lstatSync took ~0.3 s. So one worker thread makes the plain calls, in the walk's order, and
 * sends the results over in batches; the main thread only compares and writes listings.
 *
 * The worker runs at most MAX_AHEAD_ENTRIES names ahead of what the walk has taken. The walk takes each directory's
 * result with take(); a directory it skips (excluded, gone, replaced by a file) is dropped once the walk takes a later
 * one. Anything the scan could not read (the directory, one name) is left for the walk to do itself, so errors are
 * reported exactly as before; so is everything, when the worker is gone.
 */
import type { Worker } from 'node:worker_threads';
import { FIELD_COUNT, NO_STAT, STOP, TAKEN, type ScanBatch } from './scan-worker.js';
import { startWorker } from './worker-threads.js';

/** The lstat fields the backup uses: a BigIntStats has them all. */
export interface EntryStat {
  readonly mode: bigint;
  readonly uid: bigint;
  readonly gid: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly ino: bigint;
  readonly dev: bigint;
  readonly nlink: bigint;
  isDirectory(): boolean;
  isFile(): boolean;
  isSymbolicLink(): boolean;
  isSocket(): boolean;
  isFIFO(): boolean;
}

export interface ScannedDir {
  /** Sorted names; undefined when the directory could not be listed (the walk lists it itself and reports why). */
  names: string[] | undefined;
  /** lstat of names[i], or undefined when it failed or the name is excluded (the walk calls lstat itself). */
  stats: (EntryStat | undefined)[];
}

/** Names scanned ahead of the walk at most (a directory larger than this is still scanned whole). */
const MAX_AHEAD_ENTRIES = 16384;

const NOT_SCANNED: ScannedDir = { names: undefined, stats: [] };

const S_IFMT = 0o170000n;

/** One name's lstat fields, read from the batch the worker sent (in the order of scan-worker.ts). */
class ScannedStat implements EntryStat {
  constructor(
    private readonly f: BigInt64Array,
    private readonly at: number,
  ) {}
  get mode(): bigint {
    return this.f[this.at]!;
  }
  get uid(): bigint {
    return this.f[this.at + 1]!;
  }
  get gid(): bigint {
    return this.f[this.at + 2]!;
  }
  get size(): bigint {
    return this.f[this.at + 3]!;
  }
  get mtimeNs(): bigint {
    return this.f[this.at + 4]!;
  }
  get ctimeNs(): bigint {
    return this.f[this.at + 5]!;
  }
  get ino(): bigint {
    return this.f[this.at + 6]!;
  }
  get nlink(): bigint {
    return this.f[this.at + 7]!;
  }
  get dev(): bigint {
    return this.f[this.at + 8]!;
  }
  private is(type: bigint): boolean {
    return (this.f[this.at]! & S_IFMT) === type;
  }
  isDirectory(): boolean {
    return this.is(0o040000n);
  }
  isFile(): boolean {
    return this.is(0o100000n);
  }
  isSymbolicLink(): boolean {
    return this.is(0o120000n);
  }
  isSocket(): boolean {
    return this.is(0o140000n);
  }
  isFIFO(): boolean {
    return this.is(0o010000n);
  }
}

/**
 * The order of the walk between two paths under one root: depth first, the names of a directory in sorted order
 * (negative when `a` comes first).
 */
export function walkOrder(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < x.length && i < y.length; i++) {
    if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  }
  return x.length - y.length;
}

interface Received {
  abs: string;
  scanned: ScannedDir;
  /** What it counts against the worker's room ahead (scan-worker.ts counts the same). */
  weight: number;
}

export class ScanAhead {
  private readonly worker: Worker;
  private readonly credit = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  /** Directories received and not taken, in walk order, from `head` on. */
  private received: Received[] = [];
  private head = 0;
  /** Nothing more will come: the scan is complete, stopped, or its worker is gone. */
  private done = false;
  private wakeUp: (() => void)[] = [];
  private stopped = false;

  constructor(
    readonly root: string,
    excludes: readonly string[],
  ) {
    this.worker = startWorker('scan-worker', { root, excludes: [...excludes], credit: this.credit.buffer as SharedArrayBuffer, maxAhead: MAX_AHEAD_ENTRIES });
    this.worker.on('message', (batch: ScanBatch) => this.receive(batch));
    // Without the scan the walk lists every directory itself.
    this.worker.on('error', () => this.finish());
    this.worker.on('exit', () => this.finish());
  }

  /** The scan of `abs`: NOT_SCANNED-like (names undefined) when the walk must list it itself. */
  take(abs: string): Promise<ScannedDir> {
    return this.takeFrom(abs);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    Atomics.store(this.credit, STOP, 1);
    Atomics.notify(this.credit, TAKEN);
    void this.worker.terminate().catch(() => undefined);
    this.received = [];
    this.head = 0;
    this.finish();
  }

  private async takeFrom(abs: string): Promise<ScannedDir> {
    for (;;) {
      while (this.head < this.received.length) {
        const next = this.received[this.head]!;
        const order = walkOrder(next.abs, abs);
        // The scan went past it (it did not see it as a directory): the walk lists it itself.
        if (order > 0) return NOT_SCANNED;
        this.head++;
        Atomics.add(this.credit, TAKEN, next.weight);
        Atomics.notify(this.credit, TAKEN);
        if (order === 0) return next.scanned;
      }
      if (this.head > 0) {
        this.received = this.received.slice(this.head);
        this.head = 0;
      }
      if (this.done) return NOT_SCANNED;
      await new Promise<void>((resolve) => this.wakeUp.push(resolve));
    }
  }

  private receive(batch: ScanBatch): void {
    let name = 0;
    for (const dir of batch.dirs) {
      if (dir.count < 0) {
        this.received.push({ abs: dir.abs, scanned: NOT_SCANNED, weight: 1 });
        continue;
      }
      const names = batch.names.slice(name, name + dir.count);
      const stats = new Array<EntryStat | undefined>(dir.count);
      for (let i = 0; i < dir.count; i++) {
        const at = (name + i) * FIELD_COUNT;
        stats[i] = batch.fields[at] === NO_STAT ? undefined : new ScannedStat(batch.fields, at);
      }
      name += dir.count;
      this.received.push({ abs: dir.abs, scanned: { names, stats }, weight: dir.count + 1 });
    }
    if (batch.done) this.finish();
    else this.wake();
  }

  private finish(): void {
    this.done = true;
    this.wake();
  }

  private wake(): void {
    for (const resolve of this.wakeUp.splice(0)) resolve();
  }
}
