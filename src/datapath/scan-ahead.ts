/**
 * Lists and lstat()s the directories a backup's walk will visit next, on libuv's thread pool, ahead of the walk.
 *
 * Why: an unchanged re-run is mostly readdir and lstat (one system call per name) plus comparing with the parent
 * listing. Done synchronously on the main thread, that is one thread doing a long serial chain, which on a busy
 * node gets one thread's share of the CPU and loses every scheduling race: a 66,000-file tree took 16-29 s of wall
 * time for 3 CPU-s under a load average of 27. Here the system calls of the next directories run on the pool's
 * threads while the main thread compares and writes listings, so the work stays queued on several threads, and the
 * main thread's own work per name gets smaller.
 *
 * Directories are scanned in the walk's order (names sorted, depth first), MAX_DIRS_IN_FLIGHT at once, at most
 * MAX_AHEAD_ENTRIES names ahead of what the walk has taken. The walk takes each directory's result with take(); a directory it skips (excluded, gone,
 * replaced by a file) is dropped once the walk takes a later one. Anything the scan could not read (the directory,
 * one name) is left for the walk to do itself, so errors are reported exactly as before.
 */
import { lstat, readdir, type BigIntStats } from 'node:fs';

export interface ScannedDir {
  /** Sorted names; undefined when the directory could not be listed (the walk lists it itself and reports why). */
  names: string[] | undefined;
  /** lstat of names[i], or undefined when it failed (the walk calls lstat itself). */
  stats: (BigIntStats | undefined)[];
}

/** Names scanned ahead of the walk at most (a directory larger than this is still scanned whole). */
const MAX_AHEAD_ENTRIES = 8192;
/** lstat calls queued on the thread pool at once per directory. */
const MAX_IN_FLIGHT = 64;
/**
 * Directories being scanned at once. Real trees have many small directories (a handful of names each): scanned one
 * after another, each costs two thread-pool round trips (readdir, then its lstat calls) in a serial chain, and the
 * walk waited on that chain more than it worked.
 */
const MAX_DIRS_IN_FLIGHT = 8;

interface Pending {
  abs: string;
  rel: string;
  result: Promise<ScannedDir>;
  resolve: (dir: ScannedDir) => void;
  /** queued: not scanned yet; scanning; ready: scanned (or given up). */
  state: 'queued' | 'scanning' | 'ready';
  /** The walk has it (it left the queue). */
  taken: boolean;
  /** The walk went past it: it will not visit it, nor anything below it. */
  dropped: boolean;
  /** Names it holds ahead of the walk, once scanned. */
  weight: number;
}

const NOT_SCANNED: ScannedDir = { names: undefined, stats: [] };

export class ScanAhead {
  /** Directories the scan knows of and the walk has not taken, in walk order (depth first, names sorted). */
  private queue: Pending[] = [];
  private readonly byPath = new Map<string, Pending>();
  private ahead = 0;
  private inFlight = 0;
  private stopped = false;

  constructor(
    root: string,
    private readonly excluded: (rel: string, name: string) => boolean,
  ) {
    this.queue.push(this.pending(root, ''));
    this.pump();
  }

  /** The scan of `abs`, when the scanner has it coming; undefined when the walk must list it itself. */
  take(abs: string): Promise<ScannedDir> | undefined {
    const wanted = this.byPath.get(abs);
    if (!wanted) return undefined;
    const at = this.queue.indexOf(wanted);
    // Everything before it in walk order was skipped by the walk: drop those, freeing their room ahead.
    for (const p of this.queue.splice(0, at + 1)) {
      this.byPath.delete(p.abs);
      this.ahead -= p.weight;
      p.weight = 0;
      if (p === wanted) p.taken = true;
      else {
        p.dropped = true;
        if (p.state === 'queued') p.resolve(NOT_SCANNED);
      }
    }
    this.pump();
    return wanted.result;
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.queue) if (p.state === 'queued') p.resolve(NOT_SCANNED);
    this.queue = [];
    this.byPath.clear();
  }

  private pending(abs: string, rel: string): Pending {
    let resolve!: (dir: ScannedDir) => void;
    const result = new Promise<ScannedDir>((r) => (resolve = r));
    const p: Pending = { abs, rel, result, resolve, state: 'queued', taken: false, dropped: false, weight: 0 };
    this.byPath.set(abs, p);
    return p;
  }

  /** Starts scanning the next directories in walk order, within the bounds. */
  private pump(): void {
    for (const p of this.queue) {
      if (this.stopped || this.inFlight >= MAX_DIRS_IN_FLIGHT || this.ahead >= MAX_AHEAD_ENTRIES) return;
      if (p.state !== 'queued') continue;
      p.state = 'scanning';
      this.inFlight++;
      void this.scan(p);
    }
  }

  private async scan(p: Pending): Promise<void> {
    const scanned = await scanDirectory(p.abs, p.rel, this.excluded);
    this.inFlight--;
    p.state = 'ready';
    if (this.stopped || p.dropped) {
      p.resolve(NOT_SCANNED);
      return this.pump();
    }
    const children: Pending[] = [];
    const names = scanned.names ?? [];
    for (let i = 0; i < names.length; i++) {
      if (!scanned.stats[i]?.isDirectory()) continue;
      const childRel = p.rel ? `${p.rel}/${names[i]}` : names[i]!;
      if (!this.excluded(childRel, names[i]!)) children.push(this.pending(`${p.abs}/${names[i]}`, childRel));
    }
    // Its subdirectories come right after it in walk order, before its later siblings: at the queue's head when the
    // walk has taken it already.
    const at = p.taken ? 0 : this.queue.indexOf(p) + 1;
    this.queue.splice(at, 0, ...children);
    if (!p.taken) {
      p.weight = scanned.stats.length;
      this.ahead += p.weight;
    }
    p.resolve(scanned);
    this.pump();
  }
}

async function scanDirectory(abs: string, rel: string, excluded: (rel: string, name: string) => boolean): Promise<ScannedDir> {
  let names: string[];
  try {
    names = await new Promise<string[]>((resolve, reject) => readdir(abs, (err, list) => (err ? reject(err) : resolve(list))));
  } catch {
    return { names: undefined, stats: [] };
  }
  names.sort();
  const stats: (BigIntStats | undefined)[] = new Array<BigIntStats | undefined>(names.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const i = next++;
      const name = names[i]!;
      if (excluded(rel ? `${rel}/${name}` : name, name)) continue;
      stats[i] = await new Promise<BigIntStats | undefined>((resolve) =>
        lstat(`${abs}/${name}`, { bigint: true }, (err, st) => resolve(err ? undefined : st)),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_IN_FLIGHT, names.length) }, worker));
  return { names, stats };
}
