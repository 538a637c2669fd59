/**
 * The pack reads of a restore: where each piece of a file lies (pure, from the index), and ranged reads planned with
 * read-plan.ts, started ahead of use under one cap on the bytes they hold. On an object store a restore waits on
 * requests, not on the CPU: several large reads in flight, each covering many blobs, keep the connections busy, and
 * reading only the planned ranges fetches each blob once (read windows fetched whole windows, ~1.5x the bytes).
 */
import { RepositoryCorruptError } from './errors.js';
import type { BlobLocation, MasterIndex } from './index-file.js';
import type { PackSpan } from './read-plan.js';
import type { BlobId, PackId } from './ids.js';
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

/**
 * Buffers the planned reads land in, kept for the next reads: a restore reads about its size again in 1-8 MiB
 * responses, and a fresh buffer each time cost page faults and garbage collections. Sizes are rounded up (to a power
 * of two below 1 MiB, to whole MiB above) so that buffers fit other reads; at most `maxFree` bytes are kept. A read
 * takes a kept buffer of its own size, else the smallest larger one: taking only its own size, a restore whose reads
 * came in many sizes allocated new buffers while others sat unused, and dropped buffers it could not keep, which
 * stayed in memory until the next full GC (from MinIO, the real-tree set's restore: peak RSS 482-491 MB against
 * 455-469 MB with larger buffers taken).
 */
export class ReadBuffers {
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;

  constructor(private readonly maxFree: number) {}

  /** A buffer of at least `length` bytes (a view of it must not outlive give()). */
  take(length: number): Buffer {
    const size = bufferSize(length);
    let fit = this.free.get(size)?.length ? size : 0;
    if (!fit) {
      for (const [kept, list] of this.free) if (kept > size && list.length > 0 && (!fit || kept < fit)) fit = kept;
    }
    if (!fit) return Buffer.allocUnsafeSlow(size);
    this.freeBytes -= fit;
    return this.free.get(fit)!.pop()!;
  }

  give(buffer: Buffer): void {
    const size = buffer.length;
    if (size !== bufferSize(size) || this.freeBytes + size > this.maxFree) return;
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    list.push(buffer);
    this.freeBytes += size;
  }

  get kept(): number {
    return this.freeBytes;
  }
}

/** The size of the buffer a read of `length` bytes gets (see ReadBuffers). */
export function bufferSize(length: number): number {
  const MiB = 1 << 20;
  if (length >= MiB) return Math.ceil(length / MiB) * MiB;
  let size = 64 * 1024;
  while (size < length) size *= 2;
  return size;
}

/** The bytes of a pack read, held against the budget until release(). */
export interface HeldRead {
  data: Buffer;
  release(): void;
}

/**
 * Starts a planned read once the budget has room; the bytes count against it until the holder releases them (also
 * when the read fails: then at once). `reserve` resolves once the read is started, `data` once its bytes are here.
 * Without a budget the read starts at once (its bytes were taken from the budget by the caller, for a set of reads).
 */
export function startRead<S extends PackSpan>(opts: {
  budget?: ByteBudget;
  span: S;
  /** Reads the span, into `target` when given (the store may return other bytes). */
  read: (span: S, target?: Buffer) => Promise<Buffer>;
  /** Where the bytes go; the buffer is given back on release (so nothing may keep a view of them past it). */
  buffers?: ReadBuffers;
}): { reserved: Promise<void>; data: Promise<HeldRead> } {
  const taken = opts.budget ? opts.budget.acquire(opts.span.length) : Promise.resolve(0);
  const data = taken.then(async (n) => {
    const target = opts.buffers?.take(opts.span.length);
    let bytes: Buffer;
    try {
      bytes = await opts.read(opts.span, target);
    } catch (err) {
      opts.budget?.release(n);
      if (target) opts.buffers!.give(target);
      throw err;
    }
    let released = false;
    return {
      data: bytes,
      release: () => {
        if (released) return;
        released = true;
        opts.budget?.release(n);
        // Also when the store returned other bytes: then nothing holds a view of the target.
        if (target) opts.buffers!.give(target);
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
  hex: BlobId;
  loc: BlobLocation;
  span: PackSpan<PackId>;
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
