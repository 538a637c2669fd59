/**
 * Worker threads that open blobs for restore and check: authenticate and decrypt (AES-256-GCM with the per-blob key),
 * decompress, and recompute the keyed BLAKE3 ID. The main thread only reads packs and writes files. The thread's
 * side is open-worker.ts.
 */
import type { Worker } from 'node:worker_threads';
import type { OpenBlobMessage, OpenBlobReply, RestoreFilesMessage, RestoreFilesReply, SmallFileJob, SmallFileResult } from './open-worker.js';
import { startWorker } from './worker-threads.js';

export type { SmallFileIssue, SmallFileJob, SmallFileResult } from './open-worker.js';


export class BlobOpenError extends Error {}

/** A blob's plaintext in a pooled buffer; call release() once it is written out. */
export interface BlobLease {
  data: Buffer;
  release(): void;
}

/** Large buffers kept for reuse (each up to the largest chunk plus a little). */
const BIG_KEPT = 6;

/**
 * Buffers for sealed input and plaintext output travel to the worker and back (transferred, not copied) and are
 * reused: memory stays flat however much is restored. Blobs larger than the slab get one-off buffers.
 */
export class OpenPool {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, { resolve: (b: BlobLease) => void; reject: (e: unknown) => void; worker: number }>();
  private readonly pendingFiles = new Map<number, { resolve: (r: { results: SmallFileResult[]; slab: ArrayBuffer }) => void; reject: (e: unknown) => void; worker: number; dirs: string[] }>();
  /** Directories with small-file batches in flight: the worker writing into each, and how many of its batches. */
  private readonly dirWorkers = new Map<string, { worker: number; batches: number }>();
  private readonly free: ArrayBuffer[] = [];
  private readonly bigFree: ArrayBuffer[] = [];
  private seq = 0;
  /** Size of the buffers for blobs above the slab size (up to the largest chunk); 0 = one-offs. */
  private readonly bigSize: number;

  constructor(
    keys: { encryption: Buffer; id: Buffer },
    size: number,
    private readonly slabSize: number,
    maxBlob = 0,
  ) {
    this.bigSize = maxBlob > slabSize ? maxBlob + 64 * 1024 : 0;
    for (let i = 0; i < size; i++) {
      const w = startWorker('open-worker', { encKey: Uint8Array.from(keys.encryption), idKey: Uint8Array.from(keys.id) });
      w.on('message', (msg: OpenBlobReply | RestoreFilesReply) => {
        if ('results' in msg) {
          const f = this.pendingFiles.get(msg.seq);
          if (!f) return;
          this.pendingFiles.delete(msg.seq);
          this.busy[f.worker]!--;
          this.leaveDirs(f.dirs);
          f.resolve({ results: msg.results, slab: msg.slab });
          return;
        }
        const p = this.pending.get(msg.seq);
        if (!p) return;
        this.pending.delete(msg.seq);
        this.busy[p.worker]!--;
        this.give(msg.sealed);
        if (msg.length === undefined || msg.writeError) {
          this.give(msg.out);
          const w = msg.writeError;
          p.reject(w ? Object.assign(new Error(w.message), w.code ? { code: w.code } : {}) : new BlobOpenError(msg.error ?? 'failed'));
          return;
        }
        let released = false;
        p.resolve({
          data: Buffer.from(msg.out, 0, msg.length),
          release: () => {
            if (!released) this.give(msg.out);
            released = true;
          },
        });
      });
      w.on('error', (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        for (const p of this.pendingFiles.values()) p.reject(err);
        this.pendingFiles.clear();
        this.dirWorkers.clear();
      });
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  private give(buf: ArrayBuffer): void {
    if (buf.byteLength === this.slabSize && this.free.length < 16) this.free.push(buf);
    else if (buf.byteLength === this.bigSize && this.bigFree.length < BIG_KEPT) this.bigFree.push(buf);
  }

  /** A buffer of at least `size` bytes to read sealed bytes into (hand it to open()). */
  take(size: number): Buffer {
    // Chunks above the slab size are a few percent of random data but, left to the GC, their buffers made a large-file
    // restore's RSS swing by hundreds of MB: a few buffers of the largest chunk size are reused too.
    if (size > this.slabSize && size <= this.bigSize) return Buffer.from(this.bigFree.pop() ?? new ArrayBuffer(this.bigSize));
    if (size > this.slabSize) return Buffer.from(new ArrayBuffer(size));
    return Buffer.from(this.free.pop() ?? new ArrayBuffer(this.slabSize));
  }

  /** Opens a sealed blob held at the start of `buffer` (from take(); it is transferred). */
  open(id: Buffer, buffer: Buffer, sealedLength: number, flags: number, rawLength: number): Promise<BlobLease> {
    return this.send(id, buffer, sealedLength, flags, rawLength);
  }

  private send(id: Buffer, buffer: Buffer, sealedLength: number, flags: number, rawLength: number, write?: OpenBlobMessage['write']): Promise<BlobLease> {
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    this.busy[w]!++;
    const seq = ++this.seq;
    const out = this.take(rawLength).buffer as ArrayBuffer;
    const sealed = buffer.buffer as ArrayBuffer;
    return new Promise<BlobLease>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w });
      const msg: OpenBlobMessage = { seq, id: Uint8Array.from(id), sealed, sealedLength, out, flags, rawLength, ...(write ? { write } : {}) };
      this.workers[w]!.postMessage(msg, [sealed, out]);
    });
  }

  /**
   * Opens a sealed blob held at the start of `buffer` (from take(); it is transferred) and writes its plaintext, or a
   * slice of it, into the open file `fd` at `pos` on the worker; resolves with the bytes written. A blob that cannot
   * be opened is a BlobOpenError; a failed write, the file system's error (with its code).
   */
  async openAndWrite(id: Buffer, buffer: Buffer, sealedLength: number, flags: number, rawLength: number, write: { fd: number; pos: number; sparse: boolean; slice?: [number, number] }): Promise<number> {
    const lease = await this.send(id, buffer, sealedLength, flags, rawLength, write);
    const n = lease.data.length;
    lease.release();
    return n;
  }

  private leastBusy(): number {
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    return w;
  }

  /**
   * Restores whole small files on a worker: open (authenticate, decompress, check the ID), create the temp file, write,
   * owner/mode/times on the descriptor, rename into place. The slab is transferred and comes back with the results.
   *
   * A batch goes to the worker already writing into one of its directories (`dirs`), if any. Creating and renaming
   * a file hold its directory's lock, and on ext4 without a journal an inode allocation made within minutes of many
   * deletions scans past every recently freed inode first (milliseconds per file once tens of thousands were
   * deleted, e.g. the previous restore): two workers in one directory then take turns, the waiting one spinning on
   * the lock, so a restore took up to twice the CPU. One worker per directory keeps both cores on useful work.
   */
  restoreFiles(slab: ArrayBuffer, files: SmallFileJob[], dirs: string[] = []): Promise<{ results: SmallFileResult[]; slab: ArrayBuffer }> {
    const idlest = this.leastBusy();
    let w = idlest;
    for (const dir of dirs) {
      const owner = this.dirWorkers.get(dir);
      // A directory with many batches (thousands of files) would keep the other worker idle: once its worker has
      // two batches queued and another has none, that one helps, locks and all.
      if (owner && (this.busy[owner.worker]! < 2 || this.busy[idlest]! > 0)) {
        w = owner.worker;
        break;
      }
    }
    this.busy[w]!++;
    // Only directories this worker owns (or now takes) are counted; one owned by the other worker stays there.
    const taken: string[] = [];
    for (const dir of dirs) {
      const owner = this.dirWorkers.get(dir);
      if (owner && owner.worker !== w) continue;
      if (owner) owner.batches++;
      else this.dirWorkers.set(dir, { worker: w, batches: 1 });
      taken.push(dir);
    }
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pendingFiles.set(seq, { resolve, reject, worker: w, dirs: taken });
      const msg: RestoreFilesMessage = { seq, slab, files };
      this.workers[w]!.postMessage(msg, [slab]);
    });
  }

  private leaveDirs(dirs: string[]): void {
    for (const dir of dirs) {
      const owner = this.dirWorkers.get(dir);
      if (owner && --owner.batches === 0) this.dirWorkers.delete(dir);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
