/**
 * A worker thread that reads, chunks (FastCDC) and hashes (keyed BLAKE3) large files, so the main thread of a backup
 * only dedups and packs their chunks: on the mixed dataset the main thread was the bottleneck while the seal worker
 * idled half the time. The thread's side is chunk-worker.ts: it reads into a few reusable segment buffers, and each
 * filled segment travels here (transferred, not copied) with the cut points and chunk IDs, and goes back once its
 * chunks are handed on.
 */
import type { Worker } from 'node:worker_threads';
import type { ChunkerParams } from './chunker.js';
import type { ChunkWorkerMessage, SegmentMessage } from './chunk-worker.js';
import { startWorker } from './worker-threads.js';


/** One chunk of a file: its bytes (valid only until the callback's promise settles) and its keyed ID. */
export interface WorkerChunk {
  data: Buffer;
  id: Buffer;
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
    this.worker = startWorker('chunk-worker', {
      chunker: options.chunker,
      idKey: Uint8Array.from(options.idKey),
      segments: SEGMENTS,
      // Room for a remainder of up to two average chunks plus a read; longer remainders get a one-off segment.
      segmentSize: Math.min(options.chunker.max, 2 * options.chunker.avg) + SEGMENT_READ,
      segmentRead: SEGMENT_READ,
    });
    this.worker.on('message', (msg: SegmentMessage) => {
      if (msg.gen !== this.gen && msg.segment) {
        // From a file given up on: straight back to the worker.
        this.send({ give: msg.segment }, [msg.segment]);
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

  private send(msg: ChunkWorkerMessage, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(msg, transfer);
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
    this.send({ file: true, gen, fd, pos });
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
          this.send({ give: msg.segment }, [msg.segment]);
        }
        if (msg.done) {
          finished = true;
          return total;
        }
      }
    } finally {
      if (!finished && !this.failure) {
        // Given up half way: the worker must stop reading this descriptor before the caller closes it.
        this.send({ cancel: gen });
        for (;;) {
          const m = await this.receive().catch(() => undefined);
          if (!m || m.cancelled) break;
          if (m.segment) this.send({ give: m.segment }, [m.segment]);
        }
      }
    }
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
