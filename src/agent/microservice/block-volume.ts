/**
 * Block-mode volumes for the data mover: the device at the volume path is read (or written) as one stream and kept
 * in the repository as a snapshot holding a single regular file, `BLOCK_VOLUME_ENTRY`, whose content is the device's
 * bytes chunked, deduplicated and sealed like any file's. Zero runs are stored as runs, not blobs, so an unused
 * device costs next to nothing; a second backup of the same device stores only the chunks that changed (a device has
 * no mtime to skip unchanged parts by, so every backup reads it whole). The snapshot is an ordinary one: `cairn repo
 * restore` of it gives a file with the device image.
 *
 * A regular file stands in for the device where no device exists (tests); its length then is the volume's size.
 */
import { constants as fsc, promises as fsp, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { BlobWriter } from '../../datapath/blob-writer.js';
import { createChunker } from '../../datapath/chunker.js';
import { usableCpus } from '../../datapath/cpu.js';
import { CancelledError, SnapshotNotFoundError } from '../../datapath/errors.js';
import { BlobType } from '../../datapath/pack.js';
import { blobIdOf, type BlobId, type SnapshotId } from '../../datapath/ids.js';
import type { BlobIndex, BlobLoader, WithLocks, WithSnapshots } from '../../datapath/repository-roles.js';
import type { UploadRepository } from '../../datapath/uploader.js';
import { isZeroRun, readTree, TreeWriter, type ContentItem, type TreeEntry } from '../../datapath/tree.js';

/** The one file of a block volume snapshot. */
export const BLOCK_VOLUME_ENTRY = 'block-volume';

const READ_BLOCK = 4 << 20;
/** Blobs fetched ahead of the one being written, so the store's latency overlaps the writes. */
const RESTORE_READ_AHEAD = 8;

export interface BlockProgress {
  totalBytes: number;
  doneBytes: number;
}

export interface BlockBackupOptions {
  repository: UploadRepository;
  devicePath: string;
  /** Recorded as the snapshot's parent (the previous backup of the same source). */
  parent?: SnapshotId | undefined;
  tags?: Record<string, string>;
  description?: string;
  signal?: AbortSignal;
  onProgress?: (p: BlockProgress) => void;
}

export interface BlockBackupResult {
  snapshotId: SnapshotId;
  bytes: number;
  newBytes: number;
  durationMs: number;
}

/** What a block volume restore uses of a repository (repository-roles.ts). */
export type BlockRestoreRepository = BlobIndex & BlobLoader & WithSnapshots & WithLocks;

export interface BlockRestoreOptions {
  repository: BlockRestoreRepository;
  snapshotId: string;
  devicePath: string;
  signal?: AbortSignal;
  onProgress?: (p: BlockProgress) => void;
}

export interface BlockRestoreResult {
  bytes: number;
  durationMs: number;
}

/**
 * The size of a block device (from sysfs, in 512-byte sectors, by its device number) or of a regular file standing
 * in for one; undefined when it cannot be told (progress totals then grow with the bytes read).
 */
export function blockVolumeSize(path: string, sysfs = '/sys/dev/block'): number | undefined {
  const st = statSync(path);
  if (st.isFile()) return st.size;
  if (!st.isBlockDevice()) return undefined;
  const major = Math.floor(st.rdev / 256) & 0xfff;
  const minor = (st.rdev & 0xff) | (Math.floor(st.rdev / 4096) & 0xfff00);
  try {
    const sectors = Number(readFileSync(`${sysfs}/${major}:${minor}/size`, 'utf8').trim());
    return Number.isFinite(sectors) ? sectors * 512 : undefined;
  } catch {
    return undefined;
  }
}

/** A Block volume must be a block device (or a regular file standing in for one). */
export function checkBlockVolume(path: string): void {
  let ok: boolean;
  try {
    const st = statSync(path);
    ok = st.isBlockDevice() || st.isFile();
  } catch (err) {
    throw new Error(`volume path ${path} is not accessible: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  if (!ok) throw new Error(`volume path ${path} is not a block device`);
}

function isZero(chunk: Buffer, zero: Buffer): boolean {
  return chunk[0] === 0 && chunk[chunk.length - 1] === 0 && chunk.equals(zero.subarray(0, chunk.length));
}

export async function backupBlockVolume(opts: BlockBackupOptions): Promise<BlockBackupResult> {
  const repo = opts.repository;
  const started = Date.now();
  const devicePath = resolve(opts.devicePath);
  const totalKnown = blockVolumeSize(devicePath);
  const lock = await repo.locks.lock({ exclusive: false });
  try {
    await repo.loadIndex();
    const writer = new BlobWriter(repo, { concurrency: Math.max(2, usableCpus() * 2), maxUploads: 2, ...(opts.signal ? { signal: opts.signal } : {}) });
    const chunker = createChunker(repo.config.chunker);
    const max = repo.config.chunker.max;
    const zero = Buffer.alloc(max);
    const buf = Buffer.allocUnsafe(max + READ_BLOCK);
    const content: ContentItem[] = [];
    let total = 0;
    let newBytes = 0;
    const fd = await fsp.open(devicePath, 'r');
    const reader = new ReadAhead(fd);
    try {
      let start = 0;
      let end = 0;
      let eof = false;
      for (;;) {
        opts.signal?.throwIfAborted();
        // The chunker needs `max` bytes in view unless the device ends sooner.
        while (!eof && end - start < max) {
          if (buf.length - end < READ_BLOCK) {
            buf.copyWithin(0, start, end);
            end -= start;
            start = 0;
          }
          const n = await reader.readInto(buf, end);
          if (n === 0) eof = true;
          end += n;
        }
        if (end === start) break;
        const len = chunker.next(buf, start, end);
        const chunk = buf.subarray(start, start + len);
        if (isZero(chunk, zero)) {
          const last = content[content.length - 1];
          if (isZeroRun(last)) last.z += len;
          else content.push({ z: len });
        } else {
          const id = repo.hasher.id(chunk);
          const hex = blobIdOf(id);
          content.push(hex);
          if (await writer.add(BlobType.Data, id, hex, chunk)) newBytes += len;
        }
        start += len;
        total += len;
        opts.onProgress?.({ totalBytes: Math.max(totalKnown ?? 0, total), doneBytes: total });
      }
      const tw = new TreeWriter(async (data) => {
        const id = repo.hasher.id(data);
        const hex = blobIdOf(id);
        await writer.add(BlobType.Tree, id, hex, data);
        return hex;
      });
      const entry: TreeEntry = { n: BLOCK_VOLUME_ENTRY, t: 'f', m: 0o600, u: 0, g: 0, mt: `${BigInt(Date.now()) * 1_000_000n}`, s: total, c: content };
      tw.add(entry);
      const tree = await tw.finish();
      await writer.flush();
      const durationMs = Date.now() - started;
      const snapshotId = await repo.snapshots.save({
        version: 1,
        time: new Date().toISOString(),
        hostname: hostname(),
        username: 'root',
        source: devicePath,
        ...(opts.parent ? { parent: opts.parent } : {}),
        tags: opts.tags ?? {},
        ...(opts.description ? { description: opts.description } : {}),
        tree,
        summary: { files: 1, dirs: 0, bytes: total, newBytes, reusedBytes: total - newBytes, newFiles: 1, unchangedFiles: 0, storedBytes: writer.stats.storedBytes, durationMs, errors: 0 },
      });
      return { snapshotId, bytes: total, newBytes, durationMs };
    } catch (err) {
      await writer.abandon();
      if (opts.signal?.aborted) throw new CancelledError();
      throw err;
    } finally {
      await reader.settle();
      await fd.close();
    }
  } finally {
    await lock.release().catch(() => undefined);
  }
}

/**
 * Sequential reads with the next blocks already in flight, so the device's latency overlaps chunking and hashing.
 * A short read (the end, or a device that returns less) drops what was read ahead and goes on from where it ended.
 */
class ReadAhead {
  private static readonly DEPTH = 2;
  private readonly inflight: { at: number; buffer: Buffer; read: Promise<number> }[] = [];
  private readonly spare: Buffer[] = [];
  private next = 0;

  constructor(private readonly fd: fsp.FileHandle) {}

  private issue(): void {
    const buffer = this.spare.pop() ?? Buffer.allocUnsafe(READ_BLOCK);
    const at = this.next;
    this.next += READ_BLOCK;
    const read = this.fd.read(buffer, 0, READ_BLOCK, at).then((r) => r.bytesRead);
    read.catch(() => undefined); // awaited in order; a failure ahead must not go unhandled meanwhile
    this.inflight.push({ at, buffer, read });
  }

  /** Copies the next block (up to READ_BLOCK bytes) into `target` at `offset`; 0 at the end. */
  async readInto(target: Buffer, offset: number): Promise<number> {
    while (this.inflight.length < ReadAhead.DEPTH) this.issue();
    const head = this.inflight.shift()!;
    const n = await head.read;
    head.buffer.copy(target, offset, 0, n);
    this.spare.push(head.buffer);
    if (n < READ_BLOCK) {
      await this.settle();
      this.next = head.at + n;
    }
    return n;
  }

  /** Waits for the reads in flight (their buffers must not be reused, nor the descriptor closed, under them). */
  async settle(): Promise<void> {
    for (const r of this.inflight.splice(0)) {
      await r.read.catch(() => 0);
      this.spare.push(r.buffer);
    }
  }
}

/** The single file entry of a block volume snapshot; anything else is refused rather than half-written to a device. */
async function blockEntry(repo: Pick<BlobLoader, 'loadTreeBlob'>, tree: BlobId[], snapshotId: SnapshotId): Promise<TreeEntry> {
  const entries: TreeEntry[] = [];
  for await (const e of readTree(tree, (id) => repo.loadTreeBlob(id))) {
    entries.push(e);
    if (entries.length > 1) break;
  }
  const only = entries[0];
  if (entries.length !== 1 || !only || only.t !== 'f' || only.n !== BLOCK_VOLUME_ENTRY) {
    throw new SnapshotNotFoundError(`snapshot ${snapshotId.slice(0, 8)} is not a block volume snapshot`);
  }
  return only;
}

export async function restoreBlockVolume(opts: BlockRestoreOptions): Promise<BlockRestoreResult> {
  const repo = opts.repository;
  const started = Date.now();
  const devicePath = resolve(opts.devicePath);
  const lock = await repo.locks.lock({ exclusive: false });
  try {
    await repo.loadIndex();
    const snap = await repo.snapshots.find(opts.snapshotId);
    const entry = await blockEntry(repo, snap.tree, snap.id);
    const totalBytes = entry.s ?? 0;
    // Never created or truncated on open: a device is written in place; a stand-in file is cut to size at the end.
    const fd = await fsp.open(devicePath, fsc.O_WRONLY);
    try {
      const isFile = (await fd.stat()).isFile();
      const capacity = isFile ? undefined : blockVolumeSize(devicePath);
      if (capacity !== undefined && capacity < totalBytes) {
        throw new Error(`block device ${devicePath} holds ${capacity} bytes, fewer than the ${totalBytes} of snapshot ${snap.id.slice(0, 8)}`);
      }
      let pos = 0;
      const report = () => opts.onProgress?.({ totalBytes, doneBytes: pos });
      const writeAll = async (data: Buffer) => {
        let off = 0;
        while (off < data.length) {
          const { bytesWritten } = await fd.write(data, off, data.length - off, pos + off);
          off += bytesWritten;
        }
        pos += data.length;
        report();
      };
      if (entry.in !== undefined) await writeAll(Buffer.from(entry.in, 'base64'));
      const items = entry.c ?? [];
      const fetches = new Map<number, Promise<Buffer>>();
      const fetch = (i: number) => {
        const item = items[i];
        if (typeof item === 'string' && !fetches.has(i)) {
          const p = repo.loadBlob(item, { ...(opts.signal ? { signal: opts.signal } : {}) });
          p.catch(() => undefined); // awaited in order below; a failure ahead must not go unhandled meanwhile
          fetches.set(i, p);
        }
      };
      let zero: Buffer | undefined;
      for (let i = 0; i < items.length; i++) {
        opts.signal?.throwIfAborted();
        for (let j = i; j < Math.min(items.length, i + RESTORE_READ_AHEAD); j++) fetch(j);
        const item = items[i]!;
        if (typeof item === 'string') {
          const data = await fetches.get(i)!;
          fetches.delete(i);
          await writeAll(data);
        } else {
          // Devices hold whatever was there before: zero runs are written, not skipped.
          zero ??= Buffer.alloc(READ_BLOCK);
          let left = isZeroRun(item) ? item.z : 0;
          while (left > 0) {
            const n = Math.min(left, zero.length);
            await writeAll(zero.subarray(0, n));
            left -= n;
          }
        }
      }
      if (isFile) await fd.truncate(pos);
      await fd.sync();
      return { bytes: pos, durationMs: Date.now() - started };
    } catch (err) {
      if (opts.signal?.aborted) throw new CancelledError();
      throw err;
    } finally {
      await fd.close();
    }
  } finally {
    await lock.release().catch(() => undefined);
  }
}
