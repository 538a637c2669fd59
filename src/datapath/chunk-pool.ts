/**
 * A worker thread that reads, chunks (FastCDC) and hashes (keyed BLAKE3) large files, so the main thread of a backup
 * only dedups and packs their chunks: on the mixed dataset the main thread was the bottleneck while the seal worker
 * idled half the time. The worker reads into a few reusable segment buffers; each filled segment travels to the main
 * thread (transferred, not copied) with the cut points and chunk IDs, and comes back once its chunks are handed on.
 * Bytes after the last cut of a segment are carried to the start of the next one (they are less than `max`).
 *
 * The worker is plain JavaScript evaluated from a string, like seal-pool.ts; its cut loop is chunker.ts
 * CUT_LOOP_SOURCE, the very loop the main thread runs, so both cut a file at the same places.
 */
import type { Worker } from 'node:worker_threads';
import { blake3ModulePath } from './blake3.js';
import { startWorker } from './worker-threads.js';
import { CUT_LOOP_SOURCE, cutTables, type ChunkerParams } from './chunker.js';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { readSync } = require('node:fs');
const { Blake3Hasher } = require(workerData.blakePath);
const t = workerData.tables;
const next = new Function('t', workerData.cutSource)(t);
const hasher = Blake3Hasher.newKeyed(Buffer.from(workerData.idKey));
const free = [];
for (let i = 0; i < workerData.segments; i++) free.push(new ArrayBuffer(workerData.segmentSize));
// One one-off segment is kept for the next long run without a cut; others are freed at once when they come back
// (ArrayBuffer transfer(0) releases the memory now, where a dropped buffer waits for a GC that this isolate, which
// allocates almost nothing, rarely runs: 10 MiB each).
let spareLarge = null;
let carry = null;
let job = null;
function fail(err) {
  parentPort.postMessage({ gen: job.gen, error: { code: err && err.code, message: String(err && err.message || err) } });
  job = null;
}
function pump() {
  while (job && free.length > 0) {
    let ab = free.pop();
    // A remainder that leaves less than a read's room (a run with no cut for more than two average chunks, rare)
    // gets a one-off segment big enough for the largest chunk; it is dropped when it comes back.
    if (job.carried > 0 && ab.byteLength - job.carried < workerData.segmentRead) {
      free.push(ab);
      ab = spareLarge ?? new ArrayBuffer(t.max + workerData.segmentRead);
      spareLarge = null;
    }
    const buf = Buffer.from(ab);
    let end = 0;
    if (job.carried > 0) { carry.copy(buf, 0, 0, job.carried); end = job.carried; job.carried = 0; }
    try {
      while (end < buf.length && !job.eof) {
        const n = readSync(job.fd, buf, end, buf.length - end, job.pos);
        if (n === 0) job.eof = true;
        end += n;
        job.pos += n;
      }
    } catch (err) { if (ab.byteLength === workerData.segmentSize) free.push(ab); else spareLarge = ab; fail(err); return; }
    const cuts = [];
    const ids = [];
    let start = 0;
    while (start < end) {
      const len = next(buf, start, end);
      if (!job.eof && len === end - start && len < t.max) break; // no cut in view: the rest goes on in the next segment
      hasher.reset();
      hasher.update(buf.subarray(start, start + len));
      ids.push(hasher.digestBuffer());
      cuts.push(start, len);
      start += len;
    }
    if (start < end) {
      if (!carry) carry = Buffer.allocUnsafe(t.max);
      buf.copy(carry, 0, start, end);
      job.carried = end - start;
    }
    const idBytes = new Uint8Array(ids.length * 32);
    for (let i = 0; i < ids.length; i++) idBytes.set(ids[i], i * 32);
    const done = job.eof && job.carried === 0;
    parentPort.postMessage({ gen: job.gen, segment: ab, cuts: Uint32Array.from(cuts), ids: idBytes.buffer, done }, [ab, idBytes.buffer]);
    if (done) job = null;
  }
}
parentPort.on('message', (msg) => {
  if (msg.give) {
    if (msg.give.byteLength === workerData.segmentSize) free.push(msg.give);
    else if (!spareLarge) spareLarge = msg.give;
    else msg.give.transfer(0);
  }
  else if (msg.file) job = { gen: msg.gen, fd: msg.fd, pos: msg.pos, eof: false, carried: 0 };
  else if (msg.cancel) { if (job && job.gen === msg.cancel) job = null; parentPort.postMessage({ gen: msg.cancel, cancelled: true }); }
  pump();
});
`;

/** One chunk of a file: its bytes (valid only until the callback's promise settles) and its keyed ID. */
export interface WorkerChunk {
  data: Buffer;
  id: Buffer;
}

interface SegmentMessage {
  gen: number;
  segment?: ArrayBuffer;
  cuts?: Uint32Array;
  ids?: ArrayBuffer;
  done?: boolean;
  error?: { code?: string; message: string };
  cancelled?: boolean;
}

/** Segments in flight per file: one being handed on by the main thread while the worker fills the other. */
const SEGMENTS = 2;
/** Bytes read per segment beyond the carried remainder (at least). */
const SEGMENT_READ = 2 << 20;

export class ChunkWorker {
  private readonly worker: Worker;
  private gen = 0;
  private readonly inbox: SegmentMessage[] = [];
  private wake: (() => void) | undefined;
  private failure: Error | undefined;

  constructor(options: { chunker: ChunkerParams; idKey: Buffer }) {
    const tables = cutTables(options.chunker);
    this.worker = startWorker(WORKER_SOURCE, {
      tables,
      cutSource: CUT_LOOP_SOURCE,
      idKey: Uint8Array.from(options.idKey),
      blakePath: blake3ModulePath(),
      segments: SEGMENTS,
      // Room for a remainder of up to two average chunks plus a read; longer remainders get a one-off segment.
      segmentSize: Math.min(options.chunker.max, 2 * options.chunker.avg) + SEGMENT_READ,
      segmentRead: SEGMENT_READ,
    });
    this.worker.on('message', (msg: SegmentMessage) => {
      if (msg.gen !== this.gen && msg.segment) {
        // From a file given up on: straight back to the worker.
        this.worker.postMessage({ give: msg.segment }, [msg.segment]);
        return;
      }
      this.inbox.push(msg);
      this.notify();
    });
    this.worker.on('error', (err) => {
      this.failure ??= err;
      this.notify();
    });
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async receive(): Promise<SegmentMessage> {
    for (;;) {
      const m = this.inbox.shift();
      if (m) return m;
      if (this.failure) throw this.failure;
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  /**
   * Chunks the file open as `fd` from byte `pos` to its end, calling `onChunk` for each chunk in order (one at a time:
   * the next call waits for the previous promise). Returns the bytes chunked. The descriptor stays the caller's; it
   * is not read any more once this settles. One file at a time per worker.
   */
  async chunkFile(fd: number, pos: number, onChunk: (chunk: WorkerChunk) => Promise<void>): Promise<number> {
    const gen = ++this.gen;
    this.inbox.length = 0;
    this.worker.postMessage({ file: true, gen, fd, pos });
    let total = 0;
    let finished = false;
    try {
      for (;;) {
        const msg = await this.receive();
        if (msg.error) {
          finished = true;
          throw Object.assign(new Error(msg.error.message), msg.error.code ? { code: msg.error.code } : {});
        }
        if (!msg.segment) continue;
        const seg = Buffer.from(msg.segment);
        const cuts = msg.cuts!;
        const ids = Buffer.from(msg.ids!);
        try {
          for (let k = 0; k < cuts.length; k += 2) {
            const at = cuts[k]!;
            const len = cuts[k + 1]!;
            await onChunk({ data: seg.subarray(at, at + len), id: ids.subarray(k * 16, k * 16 + 32) });
            total += len;
          }
        } finally {
          this.worker.postMessage({ give: msg.segment }, [msg.segment]);
        }
        if (msg.done) {
          finished = true;
          return total;
        }
      }
    } finally {
      if (!finished && !this.failure) {
        // Given up half way: the worker must stop reading this descriptor before the caller closes it.
        this.worker.postMessage({ cancel: gen });
        for (;;) {
          const m = await this.receive().catch(() => undefined);
          if (!m || m.cancelled) break;
          if (m.segment) this.worker.postMessage({ give: m.segment }, [m.segment]);
        }
      }
    }
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
