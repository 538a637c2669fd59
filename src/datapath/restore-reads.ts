/**
 * The pack reads of a restore: where each piece of a file lies (pure, from the index), and ranged reads planned with
 * read-plan.ts, started ahead of use under one cap on the bytes they hold. On an object store a restore waits on
 * requests, not on the CPU: several large reads in flight, each covering many blobs, keep the connections busy, and
 * reading only the planned ranges fetches each blob once (read windows fetched whole windows, ~1.5x the bytes).
 */
import { RepositoryCorruptError } from './errors.js';
import type { BlobLocation, MasterIndex } from './index-file.js';
import type { PackSpan } from './read-plan.js';
import { isBundleSlice, isZeroRun, type ContentItem } from './tree.js';

/**
 * Bytes of pack reads in flight or waiting to be used, across a restore. 64 MiB: 8 store connections (the store's
 * default limit) with a 4 MiB read each, and as much again fetched ahead; more did not restore faster from MinIO.
 */
export const READ_BUDGET_BYTES = 64 << 20;

/** A FIFO cap on bytes: a request waits until its bytes are free, and later requests wait behind it. */
export class ByteBudget {
  private used = 0;
  private readonly waiting: { bytes: number; resolve: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Takes `bytes` (at most the capacity: a larger read takes it all). Returns what was taken, for release(). */
  async acquire(bytes: number): Promise<number> {
    const n = Math.min(bytes, this.capacity);
    if (this.waiting.length === 0 && this.used + n <= this.capacity) {
      this.used += n;
      return n;
    }
    await new Promise<void>((resolve) => this.waiting.push({ bytes: n, resolve }));
    return n;
  }

  release(bytes: number): void {
    this.used -= bytes;
    while (this.waiting.length > 0 && this.used + this.waiting[0]!.bytes <= this.capacity) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.resolve();
    }
  }

  get inUse(): number {
    return this.used;
  }
}

/** The bytes of a pack read, held against the budget until release(). */
export interface HeldRead {
  data: Buffer;
  release(): void;
}

/**
 * Starts a planned read once the budget has room; the bytes count against it until the holder releases them (also
 * when the read fails: then at once). `reserve` resolves once the read is started, `data` once its bytes are here.
 */
export function startRead(opts: {
  budget: ByteBudget;
  span: PackSpan;
  read: (span: PackSpan) => Promise<Buffer>;
}): { reserved: Promise<void>; data: Promise<HeldRead> } {
  const taken = opts.budget.acquire(opts.span.length);
  const data = taken.then(async (n) => {
    let bytes: Buffer;
    try {
      bytes = await opts.read(opts.span);
    } catch (err) {
      opts.budget.release(n);
      throw err;
    }
    let released = false;
    return {
      data: bytes,
      release: () => {
        if (!released) opts.budget.release(n);
        released = true;
      },
    };
  });
  // Awaited by whoever uses the bytes; a failure nobody reached (a restore stopped first) must not go unhandled.
  data.catch(() => undefined);
  return { reserved: taken.then(() => undefined), data };
}

/** The bytes of one item of a read. */
export function cut(read: PackSpan, data: Buffer, span: PackSpan): Buffer {
  const at = span.offset - read.offset;
  if (at < 0 || at + span.length > data.length) throw new RepositoryCorruptError(`pack ${span.pack.slice(0, 12)} is truncated`);
  return data.subarray(at, at + span.length);
}

/** One blob of a file, where it goes in the file, and where it lies in its pack. */
export interface FilePiece {
  hex: string;
  loc: BlobLocation;
  span: PackSpan;
  /** Where the piece's bytes start in the file. */
  pos: number;
  /** A slice of a bundle blob: these bytes of its plaintext (else the whole blob). */
  slice?: { o: number; l: number };
}

/**
 * The pieces of a file's content list, with their file offsets, and the file's size. Zero runs are holes (no piece).
 * A blob missing from the index is a RepositoryCorruptError naming it.
 */
export function layoutPieces(items: readonly ContentItem[], index: Pick<MasterIndex, 'get' | 'packOf'>): { pieces: FilePiece[]; size: number } {
  const pieces: FilePiece[] = [];
  let pos = 0;
  for (const item of items) {
    if (isZeroRun(item)) {
      pos += item.z;
      continue;
    }
    const hex = isBundleSlice(item) ? item.b : item;
    const loc = index.get(hex);
    if (!loc) throw new RepositoryCorruptError(`blob ${hex.slice(0, 16)} is not in any index (missing index or pack)`);
    const span = { pack: index.packOf(loc), offset: loc.offset, length: loc.length };
    if (isBundleSlice(item)) {
      pieces.push({ hex, loc, span, pos, slice: { o: item.o, l: item.l } });
      pos += item.l;
    } else {
      pieces.push({ hex, loc, span, pos });
      pos += loc.rawLength;
    }
  }
  return { pieces, size: pos };
}
