/**
 * The scan worker thread (started by scan-ahead.ts through worker-threads.ts): lists and lstat()s a backup's source in
 * the walk's order (depth first, names sorted), with plain synchronous system calls, and sends what it found to the
 * main thread in batches of several directories.
 *
 * It runs at most `maxAhead` names ahead of what the walk has taken: the main thread adds the names it takes (or
 * drops) to `credit[TAKEN]`, and the worker sleeps on that counter when it is too far ahead. `credit[STOP]` set to 1
 * ends it.
 */
import { lstatSync, readdirSync, type BigIntStats } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { isExcluded } from './excludes.js';
import { CHANGE_FIELDS, writeChangeFields } from './stat-fields.js';

export interface ScanWorkerData {
  root: string;
  excludes: string[];
  /** Int32 counters shared with the main thread: [TAKEN, STOP]. */
  credit: SharedArrayBuffer;
  maxAhead: number;
}

/** Indexes into the shared counters. */
export const TAKEN = 0;
export const STOP = 1;

/**
 * The lstat fields sent per name: the change fields (stat-fields.ts), then dev. A name whose lstat failed (or that is
 * excluded) has mode -1.
 */
export const FIELD_COUNT = CHANGE_FIELDS + 1;
export const NO_STAT = -1n;

/** Directories scanned, in walk order: `count` names each (in `names`, in order), or -1 for one not listed. */
export interface ScanBatch {
  dirs: { abs: string; count: number }[];
  names: string[];
  /** FIELD_COUNT values per name of `names`. */
  fields: BigInt64Array;
  /** The last batch: the whole source was scanned. */
  done: boolean;
}

/** Names per batch at least (a batch closes after the directory that reaches it). */
const BATCH_NAMES = 512;

class Batcher {
  private dirs: ScanBatch['dirs'] = [];
  private names: string[] = [];
  private fields = new BigInt64Array(BATCH_NAMES * 2 * FIELD_COUNT);

  constructor(private readonly port: MessagePort) {}

  get size(): number {
    return this.names.length;
  }

  /** Room for the fields of `count` more names; returns where the first goes. */
  reserve(count: number): number {
    const at = this.names.length * FIELD_COUNT;
    const need = at + count * FIELD_COUNT;
    if (need > this.fields.length) {
      const grown = new BigInt64Array(Math.max(need, this.fields.length * 2));
      grown.set(this.fields.subarray(0, at));
      this.fields = grown;
    }
    return at;
  }

  addDir(abs: string, names: string[] | undefined): void {
    this.dirs.push({ abs, count: names ? names.length : -1 });
    if (names) for (const name of names) this.names.push(name);
  }

  write(at: number, st: BigIntStats | undefined): void {
    const f = this.fields;
    if (!st) {
      f[at] = NO_STAT;
      return;
    }
    writeChangeFields(f, at, st);
    f[at + CHANGE_FIELDS] = st.dev;
  }

  flush(done: boolean): void {
    if (this.dirs.length === 0 && !done) return;
    const fields = this.fields.slice(0, this.names.length * FIELD_COUNT);
    const batch: ScanBatch = { dirs: this.dirs, names: this.names, fields, done };
    this.port.postMessage(batch, [fields.buffer]);
    this.dirs = [];
    this.names = [];
  }
}

function scan(data: ScanWorkerData, port: MessagePort): void {
  const credit = new Int32Array(data.credit);
  const out = new Batcher(port);
  let produced = 0;
  const stack: { abs: string; rel: string }[] = [{ abs: data.root, rel: '' }];
  while (stack.length > 0) {
    if (Atomics.load(credit, STOP) !== 0) return;
    const { abs, rel } = stack.pop()!;
    let names: string[] | undefined;
    try {
      names = readdirSync(abs).sort();
    } catch {
      names = undefined; // the walk lists it itself and reports why
    }
    const subdirs: { abs: string; rel: string }[] = [];
    let at = out.reserve(names?.length ?? 0);
    out.addDir(abs, names);
    if (names) {
      for (const name of names) {
        const childRel = rel ? `${rel}/${name}` : name;
        let st: BigIntStats | undefined;
        if (!isExcluded(data.excludes, childRel, name)) {
          try {
            st = lstatSync(`${abs}/${name}`, { bigint: true });
          } catch {
            st = undefined; // the walk calls lstat itself
          }
        }
        out.write(at, st);
        at += FIELD_COUNT;
        if (st?.isDirectory()) subdirs.push({ abs: `${abs}/${name}`, rel: childRel });
      }
    }
    // Depth first, names sorted: the first subdirectory on top.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
    produced += (names?.length ?? 0) + 1;
    if (out.size >= BATCH_NAMES) out.flush(false);
    while (produced - Atomics.load(credit, TAKEN) > data.maxAhead && Atomics.load(credit, STOP) === 0) {
      // Sleeping with names unsent would leave the walk waiting for them: send first.
      out.flush(false);
      Atomics.wait(credit, TAKEN, Atomics.load(credit, TAKEN), 1000);
    }
  }
  out.flush(true);
}

export function main(data: ScanWorkerData, port: MessagePort): (message: unknown) => void {
  scan(data, port);
  return () => undefined;
}
