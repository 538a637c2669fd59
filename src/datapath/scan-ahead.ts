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
 * Directories are scanned in the walk's order (names sorted, depth first), at most MAX_AHEAD_ENTRIES names ahead of
 * what the walk has taken. The walk takes each directory's result with take(); a directory it skips (excluded, gone,
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
/** lstat calls queued on the thread pool at once per scanner. */
const MAX_IN_FLIGHT = 64;

interface Pending {
  abs: string;
  result: Promise<ScannedDir>;
  resolve: (dir: ScannedDir) => void;
  /** queued: the walk has not got there; taken: the walk has it; dropped: the walk went past it. */
  state: 'queued' | 'taken' | 'dropped';
  /** Names it holds ahead of the walk, once scanned. */
  weight: number;
}

const NOT_SCANNED: ScannedDir = { names: undefined, stats: [] };

export class ScanAhead {
  /** Directories the scan knows of and the walk has not taken, in walk order (depth first, names sorted). */
  private readonly queue: Pending[] = [];
  private readonly byPath = new Map<string, Pending>();
  private ahead = 0;
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(
    root: string,
    private readonly excluded: (rel: string, name: string) => boolean,
  ) {
    const first = this.pending(root);
    this.queue.push(first);
    void this.walk(first, '').catch(() => undefined);
  }

  /** The scan of `abs`, when the scanner has it coming; undefined when the walk must list it itself. */
  take(abs: string): Promise<ScannedDir> | undefined {
    const at = this.byPath.get(abs);
    if (!at) return undefined;
    // Everything before it in walk order was skipped by the walk: drop those, freeing their room ahead.
    while (this.queue.length > 0) {
      const head = this.queue.shift()!;
      this.byPath.delete(head.abs);
      head.state = head === at ? 'taken' : 'dropped';
      this.release(head);
      if (head === at) break;
    }
    return at.result;
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private pending(abs: string): Pending {
    let resolve!: (dir: ScannedDir) => void;
    const result = new Promise<ScannedDir>((r) => (resolve = r));
    const p: Pending = { abs, result, resolve, state: 'queued', weight: 0 };
    this.byPath.set(abs, p);
    return p;
  }

  private release(p: Pending): void {
    this.ahead -= p.weight;
    p.weight = 0;
    if (this.ahead < MAX_AHEAD_ENTRIES) this.wake?.();
  }

  private async room(): Promise<void> {
    while (!this.stopped && this.ahead >= MAX_AHEAD_ENTRIES) await new Promise<void>((r) => (this.wake = r));
    this.wake = undefined;
  }

  /** Depth first, in the walk's order: a directory's result is out before any of its subdirectories is scanned. */
  private async walk(dir: Pending, rel: string): Promise<void> {
    await this.room();
    if (this.stopped || dir.state === 'dropped') return dir.resolve(NOT_SCANNED);
    const scanned = await scanDirectory(dir.abs, rel, this.excluded);
    // The walk went past it meanwhile: it will not visit it, nor anything below it.
    if (this.stopped || (dir.state as Pending['state']) === 'dropped') return dir.resolve(NOT_SCANNED);
    const children: [Pending, string][] = [];
    const names = scanned.names ?? [];
    for (let i = 0; i < names.length; i++) {
      if (!scanned.stats[i]?.isDirectory()) continue;
      const childRel = rel ? `${rel}/${names[i]}` : names[i]!;
      if (!this.excluded(childRel, names[i]!)) children.push([this.pending(`${dir.abs}/${names[i]}`), childRel]);
    }
    // Its subdirectories come right after it in walk order: before its later siblings. A directory the walk has
    // taken was at the head of the queue.
    const at = dir.state === 'queued' ? this.queue.indexOf(dir) + 1 : 0;
    this.queue.splice(at, 0, ...children.map(([child]) => child));
    if (dir.state === 'queued') {
      dir.weight = scanned.stats.length;
      this.ahead += dir.weight;
    }
    dir.resolve(scanned);
    for (const [child, childRel] of children) await this.walk(child, childRel);
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
