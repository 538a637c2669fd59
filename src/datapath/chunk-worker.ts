/**
 * The chunk worker thread (started by chunk-pool.ts through worker-threads.ts): reads a large file into a few
 * reusable segment buffers, cuts it with the same FastCDC loop the backup's own thread runs (chunker.ts) and names
 * each chunk with the same keyed BLAKE3 (ContentHasher). Each filled segment travels to the main thread (transferred,
 * not copied) with the cut points and chunk IDs, and comes back once its chunks are handed on. Bytes after the last
 * cut of a segment are carried to the start of the next one (they are less than `max`).
 */
import { readSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { createChunker, type ChunkerParams } from './chunker.js';
import { ContentHasher, ID_BYTES } from './crypto.js';

export interface ChunkWorkerData {
  chunker: ChunkerParams;
  idKey: Uint8Array;
  /** Segment buffers to cycle through. */
  segments: number;
  segmentSize: number;
  /** Bytes read per segment beyond the carried remainder (at least). */
  segmentRead: number;
}

/** From the main thread: chunk a file, hand a segment back, or give up on a file. */
export type ChunkWorkerMessage = { file: true; gen: number; fd: number; pos: number } | { give: ArrayBuffer } | { cancel: number };

/** To the main thread: a filled segment, the end of a cancelled file, or the error that stopped a file. */
export interface SegmentMessage {
  gen: number;
  segment?: ArrayBuffer;
  /** Start and length of each chunk in the segment. */
  cuts?: Uint32Array;
  /** The chunks' IDs, 32 bytes each. */
  ids?: ArrayBuffer;
  /** The file's last segment. */
  done?: boolean;
  error?: { code?: string; message: string };
  cancelled?: boolean;
}

interface Job {
  gen: number;
  fd: number;
  pos: number;
  eof: boolean;
  carried: number;
}

export function main(data: ChunkWorkerData, port: MessagePort): (msg: ChunkWorkerMessage) => void {
  const chunker = createChunker(data.chunker);
  const max = data.chunker.max;
  const hasher = new ContentHasher(Buffer.from(data.idKey));
  const free: ArrayBuffer[] = [];
  for (let i = 0; i < data.segments; i++) free.push(new ArrayBuffer(data.segmentSize));
  // One one-off segment is kept for the next long run without a cut; others are freed at once when they come back
  // (ArrayBuffer transfer(0) releases the memory now, where a dropped buffer waits for a GC that this isolate, which
  // allocates almost nothing, rarely runs: 10 MiB each).
  let spareLarge: ArrayBuffer | undefined;
  let carry: Buffer | undefined;
  let job: Job | undefined;

  const post = (msg: SegmentMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(msg, transfer);

  function fail(j: Job, err: unknown): void {
    const e = err as { code?: string; message?: string };
    post({ gen: j.gen, error: { ...(e.code ? { code: e.code } : {}), message: String(e.message ?? err) } });
    job = undefined;
  }

  function giveBack(ab: ArrayBuffer): void {
    if (ab.byteLength === data.segmentSize) free.push(ab);
    else if (!spareLarge) spareLarge = ab;
    else ab.transfer(0);
  }

  /** Fills, cuts and sends segments while a file is open and a segment is free. */
  function pump(): void {
    while (job && free.length > 0) {
      const j = job;
      let ab = free.pop()!;
      // A remainder that leaves less than a read's room (a run with no cut for more than two average chunks, rare)
      // gets a one-off segment big enough for the largest chunk; it is dropped when it comes back.
      if (j.carried > 0 && ab.byteLength - j.carried < data.segmentRead) {
        free.push(ab);
        ab = spareLarge ?? new ArrayBuffer(max + data.segmentRead);
        spareLarge = undefined;
      }
      const buf = Buffer.from(ab);
      let end = 0;
      if (j.carried > 0) {
        carry!.copy(buf, 0, 0, j.carried);
        end = j.carried;
        j.carried = 0;
      }
      try {
        while (end < buf.length && !j.eof) {
          const n = readSync(j.fd, buf, end, buf.length - end, j.pos);
          if (n === 0) j.eof = true;
          end += n;
          j.pos += n;
        }
      } catch (err) {
        giveBack(ab);
        fail(j, err);
        return;
      }
      const cuts: number[] = [];
      const ids: Buffer[] = [];
      let start = 0;
      while (start < end) {
        const len = chunker.next(buf, start, end);
        if (!j.eof && len === end - start && len < max) break; // no cut in view: the rest goes on in the next segment
        ids.push(hasher.id(buf.subarray(start, start + len)));
        cuts.push(start, len);
        start += len;
      }
      if (start < end) {
        carry ??= Buffer.allocUnsafe(max);
        buf.copy(carry, 0, start, end);
        j.carried = end - start;
      }
      const idBytes = new Uint8Array(ids.length * ID_BYTES);
      for (let i = 0; i < ids.length; i++) idBytes.set(ids[i]!, i * ID_BYTES);
      const done = j.eof && j.carried === 0;
      post({ gen: j.gen, segment: ab, cuts: Uint32Array.from(cuts), ids: idBytes.buffer, done }, [ab, idBytes.buffer]);
      if (done) job = undefined;
    }
  }

  return (msg) => {
    if ('give' in msg) giveBack(msg.give);
    else if ('file' in msg) job = { gen: msg.gen, fd: msg.fd, pos: msg.pos, eof: false, carried: 0 };
    else {
      if (job && job.gen === msg.cancel) job = undefined;
      post({ gen: msg.cancel, cancelled: true });
    }
    pump();
  };
}
