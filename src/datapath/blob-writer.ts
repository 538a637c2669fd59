/**
 * The write side of a repository: dedup → compress (thread pool) → seal → pack → upload, with bounded memory and
 * uploads, and an index file written at each checkpoint so an interrupted backup's uploads are found again.
 *
 * Ordering (docs/repository-format.md §8): a blob becomes known to the in-memory index only once its pack is
 * uploaded; an index file names only uploaded packs; callers write the snapshot after flush().
 */
import { BlobCompressor, compress, worthCompressing } from './compress.js';
import { plainHash, sealBlobInto, SEAL_OVERHEAD } from './crypto.js';
import { encodeIndex, type IndexedPack } from './index-file.js';
import { BlobType, ENTRY_BYTES, FLAG_ZSTD, PackBuilder, packKey, type PackEntry } from './pack.js';
import { compressionLevel } from './repository.js';
import type { PackWriter } from './repository-roles.js';
import { blobIdOf, packIdOf, type BlobId, type PackId } from './ids.js';
import { Semaphore } from '../plugins/object-store/limit.js';
import { SealPool, type SealJob } from './seal-pool.js';
import { defaultWorkerCount } from './cpu.js';
import { collectYoungGarbage } from './heap-tuning.js';

export interface BlobWriterOptions {
  /** Compression jobs in flight at once (thread-pool work). */
  concurrency?: number;
  /** Packs uploading at once. */
  maxUploads?: number;
  /** Write an index file after this many packs … */
  checkpointPacks?: number;
  /** … or after this long since the last one. */
  checkpointMs?: number;
  signal?: AbortSignal;
  /** Store blobs even when the repository index already has them (repack writes fresh copies). */
  ignoreIndex?: boolean;
  /** Worker threads that compress and seal (default: usable CPUs; 0 = on this thread, zstd on the thread pool). */
  workers?: number;
}

/**
 * Which open pack a blob joins, beside its type. The chunks of large files get packs of their own ('file'): the chunk
 * worker reads one file at a time, so a file's chunks then lie side by side and a restore reads a pack's worth of one
 * file in one request. Packed together with the bundles of small files the walk closes meanwhile, each chunk was cut
 * off from the next by a bundle, and a restore from S3 made five or six requests per pack instead of one.
 */
export type PackLane = 'shared' | 'file';

/** The key of the open pack a blob of this type and lane joins. */
function packerKey(type: BlobType, lane: PackLane): string {
  return `${type}:${lane}`;
}

interface Queued {
  type: BlobType;
  lane: PackLane;
  id: Buffer;
  rawLength: number;
}

const BATCH_BYTES = 1 << 20;
const BATCH_COUNT = 128;
/** Bytes sealed on this thread between two minor GCs (see collectYoungGarbage). */
const INLINE_GC_BYTES = 4 << 20;

export interface BlobWriterStats {
  newBlobs: number;
  /** Plaintext bytes of new blobs. */
  newBytes: number;
  /** Bytes of packs and index files written. */
  storedBytes: number;
  packs: number;
}

const MAX_BLOBS_PER_PACK = 20_000;
/** Write an index file once this many blobs are stored but not yet in one. */
const CHECKPOINT_BLOBS = 20_000;
/** Tree packs are kept small: listings are few bytes, and a full-size buffer per backup would be wasted memory. */
const TREE_PACK_SIZE = 2 << 20;
const TREE_BUFFER_SIZE = TREE_PACK_SIZE + MAX_BLOBS_PER_PACK * ENTRY_BYTES + 4096;

export class BlobWriter {
  readonly stats: BlobWriterStats = { newBlobs: 0, newBytes: 0, storedBytes: 0, packs: 0 };
  private readonly pending = new Set<BlobId>();
  /** The open pack of each type and lane (packerKey). */
  private readonly packers = new Map<string, PackBuilder>();
  private readonly uploads = new Set<Promise<void>>();
  private readonly jobs = new Set<Promise<void>>();
  private readonly buffers: Buffer[] = [];
  private readonly treeBuffers: Buffer[] = [];
  private unindexed: IndexedPack[] = [];
  private unindexedBlobs = 0;
  private indexWrite: Promise<void> = Promise.resolve();
  private lastIndexAt = Date.now();
  private failure: unknown;
  private readonly compressSlots: Semaphore;
  private readonly maxUploads: number;
  private readonly checkpointPacks: number;
  private readonly checkpointMs: number;
  private readonly bufferSize: number;
  private pool: SealPool | undefined;
  private readonly workerCount: number;
  private readonly slabSize: number;
  private batch: Queued[] = [];
  private batchJobs: SealJob[] = [];
  private batchInput: Buffer | undefined;
  private batchBytes = 0;
  private readonly batches = new Set<Promise<void>>();
  private inlineCompressor: BlobCompressor | undefined;
  private inlineSinceGc = 0;
  /** zstd level from the repository config. */
  private readonly level: number;

  constructor(
    private readonly repo: PackWriter,
    private readonly options: BlobWriterOptions = {},
  ) {
    this.compressSlots = new Semaphore(options.concurrency ?? 4);
    this.maxUploads = options.maxUploads ?? 4;
    this.checkpointPacks = options.checkpointPacks ?? 64;
    this.checkpointMs = options.checkpointMs ?? 60_000;
    this.workerCount = options.workers ?? defaultWorkerCount();
    this.level = compressionLevel(repo.config);
    // Most chunks are near the average size; a rarer larger one travels in a one-off slab of its own.
    this.slabSize = Math.min(repo.config.chunker.max, 2 * repo.config.chunker.avg) + BATCH_BYTES;
    // A pack buffer holds packSize of blobs plus the largest header; a blob that does not fit closes the pack.
    this.bufferSize = repo.config.packSize + MAX_BLOBS_PER_PACK * ENTRY_BYTES + 4096;
  }

  /** True when the blob is stored or on its way. */
  has(hexId: BlobId): boolean {
    return this.pending.has(hexId) || (!this.options.ignoreIndex && this.repo.index.has(hexId));
  }

  private check(): void {
    if (this.failure) throw this.failure;
    this.options.signal?.throwIfAborted();
  }

  /**
   * Stores a blob unless it is known. `data` may be reused by the caller once this resolves. Returns true when the
   * blob was new.
   */
  async add(type: BlobType, id: Buffer, hexId: BlobId, data: Uint8Array, lane: PackLane = 'shared'): Promise<boolean> {
    this.check();
    if (this.has(hexId)) return false;
    this.pending.add(hexId);
    this.stats.newBlobs++;
    this.stats.newBytes += data.length;
    while (this.uploads.size >= this.maxUploads) await Promise.race(this.uploads);
    if (this.workerCount > 0) {
      // The batch goes first when its slab has no room for the blob, whatever is in it (an empty blob takes a slab
      // and no room; a lone blob larger than a slab then gets a one-off slab of its own).
      while (this.batchInput && this.batch.length > 0 && this.batchBytes + data.length > this.batchInput.length) await this.dispatch();
      this.pool ??= new SealPool(this.repo.keys.encryption, this.workerCount, { slabSize: this.slabSize, maxJobsPerBatch: BATCH_COUNT, level: this.level });
      this.batchInput ??= this.pool.takeInput(data.length);
      this.batchInput.set(data, this.batchBytes);
      this.batch.push({ type, lane, id, rawLength: data.length });
      this.batchJobs.push({ id, offset: this.batchBytes, length: data.length, compress: worthCompressing(data) });
      this.batchBytes += data.length;
      if (this.batchBytes >= BATCH_BYTES || this.batch.length >= BATCH_COUNT) await this.dispatch();
      return true;
    }
    if (!worthCompressing(data)) {
      this.appendSealed(type, lane, id, 0, data.length, data.length + SEAL_OVERHEAD, (buf, at) => sealBlobInto(this.repo.keys, id, data, buf, at));
      return true;
    }
    await this.compressSlots.acquire();
    const copy = Buffer.from(data);
    const job = compress(copy, this.level)
      .then((packed) => {
        const payload = packed ?? copy;
        this.appendSealed(type, lane, id, packed ? FLAG_ZSTD : 0, copy.length, payload.length + SEAL_OVERHEAD, (buf, at) =>
          sealBlobInto(this.repo.keys, id, payload, buf, at),
        );
      })
      .catch((err: unknown) => void (this.failure ??= err))
      .finally(() => {
        this.compressSlots.release();
        this.jobs.delete(job);
      });
    this.jobs.add(job);
    return true;
  }

  /**
   * Sends the queued blobs to a worker. When the workers already have a batch running and two waiting, this thread
   * seals the batch itself instead of waiting: with small files the workers' compression is the bottleneck, and the
   * main thread would otherwise sit idle.
   */
  private async dispatch(): Promise<void> {
    if (this.batch.length === 0 || !this.pool || !this.batchInput) return;
    const items = this.batch;
    const jobs = this.batchJobs;
    const input = this.batchInput;
    this.batch = [];
    this.batchJobs = [];
    this.batchInput = undefined;
    this.batchBytes = 0;
    // The read loop never waits on I/O (sync reads), so without this turn of the event loop the workers' finished
    // batches would never be taken back.
    await new Promise((resolve) => setImmediate(resolve));
    // A short queue at the workers is normal (their batches take about as long as this thread needs to fill one);
    // only a longer one means they are the bottleneck.
    if (this.batches.size > this.workerCount + 1) {
      this.sealInline(items, jobs, input);
      return;
    }
    const task = this.pool
      .run(input, jobs)
      .then(({ results, output, release }) => {
        try {
          for (let k = 0; k < items.length; k++) {
            const item = items[k]!;
            const r = results[k]!;
            this.appendSealed(item.type, item.lane, item.id, r.flags ? FLAG_ZSTD : 0, item.rawLength, r.length, (buf, at) => output.copy(buf, at, r.offset, r.offset + r.length));
          }
        } finally {
          release();
        }
      })
      .catch((err: unknown) => void (this.failure ??= err))
      .finally(() => this.batches.delete(task));
    this.batches.add(task);
  }

  /** Compresses and seals a batch on this thread, straight into the packs. */
  private sealInline(items: Queued[], jobs: SealJob[], input: Buffer): void {
    this.inlineCompressor ??= new BlobCompressor(this.level);
    for (let k = 0; k < items.length; k++) {
      const item = items[k]!;
      const job = jobs[k]!;
      const { bytes, flags } = this.inlineCompressor.payload(input.subarray(job.offset, job.offset + job.length), job.compress);
      this.appendSealed(item.type, item.lane, item.id, flags, item.rawLength, bytes.length + SEAL_OVERHEAD, (buf, at) => sealBlobInto(this.repo.keys, item.id, bytes, buf, at));
      this.inlineSinceGc += bytes.length;
    }
    this.pool?.giveInput(input);
    // The cipher's output buffers are garbage at once; free them before they add up.
    if (this.inlineSinceGc >= INLINE_GC_BYTES) {
      this.inlineSinceGc = 0;
      collectYoungGarbage();
    }
  }

  /** Copies an already sealed blob (repack). */
  addSealed(type: BlobType, id: Buffer, flags: number, rawLength: number, sealed: Buffer): void {
    const hexId = blobIdOf(id);
    if (this.has(hexId)) return;
    this.pending.add(hexId);
    this.appendSealed(type, 'shared', id, flags, rawLength, sealed.length, (buf, at) => sealed.copy(buf, at));
  }

  /** Waits while too many packs are uploading (for callers of addSealed). */
  async throttle(): Promise<void> {
    this.check();
    while (this.uploads.size >= this.maxUploads) await Promise.race(this.uploads);
  }

  private appendSealed(type: BlobType, lane: PackLane, id: Buffer, flags: number, rawLength: number, sealedLength: number, write: (buf: Buffer, at: number) => number): void {
    const key = packerKey(type, lane);
    let packer = this.packers.get(key);
    if (packer && (!packer.fits(sealedLength) || packer.count >= MAX_BLOBS_PER_PACK)) {
      this.upload(packer, key);
      packer = undefined;
    }
    if (!packer) {
      const need = sealedLength + 4096 + ENTRY_BYTES;
      const treeSize = TREE_BUFFER_SIZE;
      const buffer =
        type === BlobType.Tree && need <= treeSize
          ? (this.treeBuffers.pop() ?? Buffer.allocUnsafe(treeSize))
          : need <= this.bufferSize
            ? (this.buffers.pop() ?? Buffer.allocUnsafe(this.bufferSize))
            : Buffer.allocUnsafe(need);
      packer = new PackBuilder(type, buffer);
      this.packers.set(key, packer);
    }
    packer.append(id, flags, rawLength, write);
    if (packer.bytes >= (type === BlobType.Tree ? TREE_PACK_SIZE : this.repo.config.packSize)) {
      this.upload(packer, key);
    }
  }

  /**
   * The pack's bytes and name. Named on this thread: BLAKE3 of an 8 MiB pack takes ~1.5 ms, and the seal worker it
   * used to go to is the busiest thread of a backup (queued behind its batches, the name held uploads back: the first
   * backup of the mixed dataset took ~7 % longer).
   */
  private named(packer: PackBuilder): { id: PackId; bytes: Buffer; entries: PackEntry[] } {
    const { bytes, entries } = packer.finishUnnamed(this.repo.keys);
    return { id: packIdOf(plainHash([bytes])), bytes, entries };
  }

  private upload(packer: PackBuilder, key: string): void {
    this.packers.delete(key);
    let bytes: Buffer | undefined;
    const task = Promise.resolve()
      .then(async () => {
        const named = this.named(packer);
        bytes = named.bytes;
        await this.repo.store.put(packKey(named.id), named.bytes, { signal: this.options.signal });
        return named;
      })
      .then(({ id, bytes, entries }) => {
        this.stats.storedBytes += bytes.length;
        this.stats.packs++;
        const pack = { id, entries };
        if (!this.options.ignoreIndex) this.repo.index.addPack(pack);
        if (!this.options.ignoreIndex) for (const e of entries) this.pending.delete(blobIdOf(e.id));
        this.unindexed.push(pack);
        this.unindexedBlobs += entries.length;
        // Also by blob count: packs of small files hold thousands of entries each, kept in memory until indexed.
        if (this.unindexed.length >= this.checkpointPacks || this.unindexedBlobs >= CHECKPOINT_BLOBS || Date.now() - this.lastIndexAt >= this.checkpointMs) this.writeIndex();
      })
      .catch((err: unknown) => void (this.failure ??= err))
      .finally(() => {
        this.uploads.delete(task);
        // Pack buffers are reused: allocating and freeing megabytes per pack makes malloc keep ever more of them (RSS
        // grows over a long backup of many small files), and a dropped buffer stays allocated until the next full
        // GC. Keeping every returned one costs no peak memory: the pool never holds more buffers than were in use at
        // once (one filling, those uploading, and sealed batches may close one more pack than maxUploads allows).
        const pool = packer.type === BlobType.Tree ? this.treeBuffers : this.buffers;
        const size = packer.type === BlobType.Tree ? TREE_BUFFER_SIZE : this.bufferSize;
        if (bytes && bytes.buffer.byteLength === size && bytes.byteOffset === 0) pool.push(Buffer.from(bytes.buffer, 0, size));
        // A one-off (a blob larger than a pack) is freed now, not at a GC that may come late (heap-tuning.ts).
        else if (bytes && bytes.byteOffset === 0 && bytes.buffer.byteLength > size && !(bytes.buffer instanceof SharedArrayBuffer)) bytes.buffer.transfer(0);
      });
    this.uploads.add(task);
  }

  private writeIndex(): void {
    if (this.unindexed.length === 0) return;
    const packs = this.unindexed;
    this.unindexed = [];
    this.unindexedBlobs = 0;
    this.lastIndexAt = Date.now();
    this.indexWrite = this.indexWrite.then(async () => {
      const { name, bytes } = encodeIndex(this.repo.keys, packs);
      await this.repo.store.put(`index/${name}`, bytes, { signal: this.options.signal });
      this.stats.storedBytes += bytes.length;
    });
    this.indexWrite.catch((err: unknown) => void (this.failure ??= err));
  }

  /** Finishes every pack, waits for every upload and writes the last index file. Throws the first failure. */
  async flush(): Promise<void> {
    try {
      await this.dispatch();
      while (this.batches.size > 0) await Promise.all([...this.batches]);
      while (this.jobs.size > 0) await Promise.all([...this.jobs]);
      this.check();
      for (const [key, packer] of [...this.packers]) if (packer.count > 0) this.upload(packer, key);
      while (this.uploads.size > 0) await Promise.all([...this.uploads]);
    } finally {
      await this.pool?.close();
      this.pool = undefined;
    }
    this.check();
    this.writeIndex();
    await this.indexWrite;
    this.check();
  }

  /** Stops accepting work and waits for what is in flight, ignoring its errors (used after a failure or cancel). */
  async abandon(): Promise<void> {
    await Promise.allSettled([...this.jobs, ...this.batches, ...this.uploads, this.indexWrite]);
    await this.pool?.close();
    this.pool = undefined;
  }
}
