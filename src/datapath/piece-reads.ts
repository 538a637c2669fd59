/**
 * Reads the pieces of the large files a restore writes at once, planned across those files: a backup packs the chunks
 * of the files it reads in parallel side by side, so one file's next chunks lie between other files' chunks, and a
 * read planned for one file alone covers one chunk (~1 MiB). Planned over every file in flight (read-plan.ts), one
 * read covers the neighbouring chunks of several files, and each piece is written into its own file: fewer, larger
 * requests, which on an object store cost less on both sides of the connection.
 *
 * Files hand in a window of pieces at a time (`submit`) and wait for them; the scheduler keeps up to `maxReads`
 * reads in flight, each planned over every piece waiting, and starts with the read holding the oldest piece, so no
 * file waits behind later ones. Bytes count against the restore's budget (restore-reads.ts) until written.
 */
import { planPackReads, type PackRead } from './read-plan.js';
import { startRead, type ByteBudget, type ReadBuffers } from './restore-reads.js';
import type { PackSpan } from './read-plan.js';
import type { BlobId, PackId } from './ids.js';

/** A piece to read, and what to do with its read's bytes. */
export interface PieceRequest<P extends { span: PackSpan<PackId> }> {
  piece: P;
  /** Writes the piece from its read (`data` holds `read`'s bytes); runs once, for a piece not cancelled. */
  write: (read: PackSpan<PackId>, data: Buffer) => Promise<void>;
}

interface Waiting<P extends { span: PackSpan<PackId> }> extends PieceRequest<P> {
  seq: number;
  owner: object;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * A read of large files' pieces covers up to 8 MiB (a default pack): chunks are ~1 MiB, and at 4 MiB reads averaged
 * 2.6 MiB (three chunks, the fourth past the limit). The byte budget bounds how many are held.
 */
export const PIECE_SPAN = 8 << 20;

export class PieceReads<P extends { span: PackSpan<PackId>; hex: BlobId }> {
  private waiting: Waiting<P>[] = [];
  private inFlight = 0;
  private seq = 0;

  constructor(
    private readonly opts: {
      budget: ByteBudget;
      maxReads: number;
      read: (span: PackSpan<PackId>, first: BlobId, target?: Buffer) => Promise<Buffer>;
      buffers?: ReadBuffers;
    },
  ) {}

  /**
   * Queues pieces of one file (`owner`) and resolves once all are written, or rejects with the first failure once
   * every one of them has settled (the caller may then close the file). After a failure the owner's pieces still
   * waiting are dropped.
   */
  async submit(owner: object, requests: readonly PieceRequest<P>[]): Promise<void> {
    let failure: { err: unknown } | undefined;
    const settled = requests.map(
      (r) =>
        new Promise<void>((resolve) => {
          this.waiting.push({
            ...r,
            seq: this.seq++,
            owner,
            resolve,
            reject: (err) => {
              failure ??= { err };
              this.drop(owner);
              resolve();
            },
          });
        }),
    );
    this.pump();
    await Promise.all(settled);
    if (failure) throw failure.err;
  }

  /** Settles an owner's waiting pieces without reading them (its first failure is already recorded). */
  private drop(owner: object): void {
    const dropped = this.waiting.filter((w) => w.owner === owner);
    if (dropped.length === 0) return;
    this.waiting = this.waiting.filter((w) => w.owner !== owner);
    for (const w of dropped) w.resolve();
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxReads && this.waiting.length > 0) {
      const read = pickRead(this.waiting);
      const taken = new Set(read.items);
      this.waiting = this.waiting.filter((w) => !taken.has(w));
      this.inFlight++;
      void this.run(read).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(read: PackRead<Waiting<P>, PackId>): Promise<void> {
    const started = startRead({
      budget: this.opts.budget,
      span: read,
      read: (span, target) => this.opts.read(span, read.items[0]!.piece.hex, target),
      ...(this.opts.buffers ? { buffers: this.opts.buffers } : {}),
    });
    let held;
    try {
      held = await started.data;
    } catch (err) {
      for (const w of read.items) w.reject(err);
      return;
    }
    try {
      await Promise.all(
        read.items.map(async (w) => {
          try {
            await w.write(read, held.data);
            w.resolve();
          } catch (err) {
            w.reject(err);
          }
        }),
      );
    } finally {
      held.release();
    }
  }
}

/** The planned read (over every waiting piece) that holds the oldest one. */
export function pickRead<W extends { seq: number; piece: { span: PackSpan<PackId> } }>(waiting: readonly W[]): PackRead<W, PackId> {
  const reads = planPackReads(waiting, (w) => w.piece.span, { maxSpan: PIECE_SPAN });
  let best = reads[0]!;
  let oldest = Infinity;
  for (const r of reads) {
    for (const w of r.items) {
      if (w.seq < oldest) {
        oldest = w.seq;
        best = r;
      }
    }
  }
  return best;
}
