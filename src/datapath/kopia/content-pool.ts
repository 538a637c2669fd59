/**
 * Worker threads that open kopia contents and write them into restored files (the thread's side is
 * content-worker.ts). A piece goes to the least busy worker; its sealed bytes travel there without a copy when they
 * fill their own memory (pooled small buffers are copied first).
 */
import type { Worker } from 'node:worker_threads';
import { RepositoryCorruptError } from '../errors.js';
import { startWorker } from '../worker-threads.js';
import type { ContentWorkerData, ContentWorkerError, ContentWorkerMessage, SealedPiece, WholeFile, WriteContentReply } from './content-worker.js';
import type { ContentInfo } from './index.js';

/** A content read from its pack, and what the object's index says of it. */
export interface ReadPiece {
  info: ContentInfo;
  sealed: Buffer;
  objectCompressed: boolean;
  expectedLength: number;
}

/** Where a piece goes: a file descriptor and an offset. */
export interface PieceTarget {
  fd: number;
  position: number;
  sparse: boolean;
}

export class KopiaContentPool {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, { resolve: (reply: { written: number; issues: Error[] }) => void; reject: (err: unknown) => void; worker: number }>();
  private seq = 0;

  constructor(data: ContentWorkerData, size: number) {
    for (let i = 0; i < size; i++) {
      const w = startWorker('kopia/content-worker', data);
      w.on('message', (reply: WriteContentReply) => {
        const p = this.pending.get(reply.seq);
        if (!p) return;
        this.pending.delete(reply.seq);
        this.busy[p.worker]!--;
        if (reply.written !== undefined) return p.resolve({ written: reply.written, issues: (reply.issues ?? []).map(asError) });
        p.reject(asError(reply.error ?? { message: 'failed', corrupt: false }));
      });
      const fail = (err: unknown) => {
        for (const [seq, p] of this.pending) {
          if (p.worker !== i) continue;
          this.pending.delete(seq);
          p.reject(err);
        }
      };
      w.on('error', fail);
      // A worker that ends (close(), or a crash without an error event) leaves nothing waiting for it.
      w.on('exit', (code) => fail(new Error(`content worker ended (exit code ${code}) with work in flight`)));
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  /** Opens a content's sealed bytes on a worker and writes its plaintext at the target; resolves with the bytes written. */
  async write(piece: ReadPiece, target: PieceTarget): Promise<number> {
    return (await this.send((seq, sealed) => ({ kind: 'piece', seq, ...sealed, ...target }), piece)).written;
  }

  /**
   * Restores a file of one piece on a worker: created, written, attributes set, renamed into place. Resolves with the
   * bytes written and the attributes that could not be set; rejects when the file could not be restored.
   */
  writeFile(piece: ReadPiece, file: WholeFile): Promise<{ written: number; issues: Error[] }> {
    return this.send((seq, sealed) => ({ kind: 'file', seq, ...sealed, ...file }), piece);
  }

  private send(message: (seq: number, sealed: SealedPiece) => ContentWorkerMessage, piece: ReadPiece): Promise<{ written: number; issues: Error[] }> {
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    this.busy[w]!++;
    const seq = ++this.seq;
    const own = piece.sealed.byteOffset === 0 && piece.sealed.byteLength === piece.sealed.buffer.byteLength && piece.sealed.buffer instanceof ArrayBuffer;
    const sealed = own ? (piece.sealed.buffer as ArrayBuffer) : Uint8Array.prototype.slice.call(piece.sealed).buffer;
    const msg = message(seq, { info: piece.info, sealed, sealedLength: piece.sealed.length, objectCompressed: piece.objectCompressed, expectedLength: piece.expectedLength });
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w });
      this.workers[w]!.postMessage(msg, [sealed]);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

function asError(e: ContentWorkerError): Error {
  return e.corrupt ? new RepositoryCorruptError(e.message) : Object.assign(new Error(e.message), e.code ? { code: e.code } : {});
}
