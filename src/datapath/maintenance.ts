/**
 * Maintenance (docs/repository-format.md §8): under an exclusive lock, drop content no snapshot references and
 * repack partly used packs. New packs and a consolidated index are written before anything is deleted, so at every
 * moment each referenced blob is in an indexed pack. Packs younger than the grace period are left alone (an
 * interrupted backup that is resumed soon still finds its uploads). Packs in no index are useless to everyone but
 * the backup still writing them: they go at once when the exclusive lock showed no other writer could still be
 * running (no other lock, or only those of commands known to be gone), else once older than the grace period.
 */
import { BlobWriter } from './blob-writer.js';
import { decodeIndex, encodeIndex, type IndexedPack } from './index-file.js';
import { blobIdOf, type BlobId, type PackId } from './ids.js';
import { packIdOfKey, packKey, type PackEntry } from './pack.js';
import type { BlobLoader, PackWriter, WithLocks, WithSnapshots } from './repository-roles.js';
import { walkSnapshot } from './walk-snapshots.js';

/**
 * What maintenance uses of a repository (repository-roles.ts): it reads the index files and packs itself and writes
 * new ones (PackWriter), walks the snapshots' trees, and takes the exclusive lock.
 */
export type MaintenanceRepository = PackWriter & Pick<BlobLoader, 'loadTreeBlob'> & WithSnapshots & WithLocks;

export interface MaintenanceOptions {
  repository: MaintenanceRepository;
  /** Packs (indexed or not) younger than this are never touched. Default 1 hour. */
  gracePeriodMs?: number;
  /** Repack a pack when at least this fraction of its bytes is unused. Default 0.1. */
  repackThreshold?: number;
  signal?: AbortSignal;
}

export interface MaintenanceResult {
  snapshots: number;
  packsBefore: number;
  packsDeleted: number;
  packsRepacked: number;
  packsWritten: number;
  unindexedPacksDeleted: number;
  blobsRemoved: number;
  bytesFreed: number;
  indexFilesBefore: number;
  indexFilesAfter: number;
  staleLocksRemoved: number;
}

export async function maintenance(options: MaintenanceOptions): Promise<MaintenanceResult> {
  const repo = options.repository;
  const grace = options.gracePeriodMs ?? 60 * 60_000;
  const threshold = options.repackThreshold ?? 0.1;
  const now = Date.now();
  const lock = await repo.locks.lock({ exclusive: true });
  try {
    const result: MaintenanceResult = {
      snapshots: 0, packsBefore: 0, packsDeleted: 0, packsRepacked: 0, packsWritten: 0, unindexedPacksDeleted: 0,
      blobsRemoved: 0, bytesFreed: 0, indexFilesBefore: 0, indexFilesAfter: 0,
      // Taking the exclusive lock removed the leftovers of commands that are gone.
      staleLocksRemoved: lock.others.filter((o) => o.verdict === 'owner-gone' || o.verdict === 'stale').length,
    };
    // A lock whose owner nobody could check on (stale by age only) may belong to a writer still uploading.
    const writersMayRun = lock.others.some((o) => o.verdict !== 'owner-gone');
    // All index files, pack by pack (a pack may be listed by several files; merge them).
    const indexNames: string[] = [];
    for await (const { key } of repo.store.list('index/')) indexNames.push(key.slice('index/'.length));
    result.indexFilesBefore = indexNames.length;
    const packs = new Map<PackId, PackEntry[]>();
    for (const name of indexNames) {
      for (const p of decodeIndex(repo.keys, await repo.store.get(`index/${name}`), name)) {
        if (!packs.has(p.id)) packs.set(p.id, p.entries);
      }
    }
    for (const [id, entries] of packs) repo.index.addPack({ id, entries });

    const stored = new Map<PackId, { size: number; lastModified: Date }>();
    for await (const o of repo.store.list('data/')) stored.set(packIdOfKey(o.key), { size: o.size, lastModified: o.lastModified });
    result.packsBefore = stored.size;

    // Mark.
    const used = new Set<BlobId>();
    const seen = new Set<BlobId>();
    for (const snap of await repo.snapshots.list()) {
      result.snapshots++;
      await walkSnapshot(repo, snap, seen, { tree: (h) => used.add(h), data: (h) => used.add(h) }, options.signal);
    }

    // Decide per pack. A blob is kept once: its first copy in a kept pack.
    const kept: IndexedPack[] = [];
    const toDelete: PackId[] = [];
    const toRepack: IndexedPack[] = [];
    const placed = new Set<BlobId>();
    const young = (id: PackId) => {
      const info = stored.get(id);
      return info !== undefined && now - info.lastModified.getTime() < grace;
    };
    for (const [id, entries] of packs) {
      if (!stored.has(id)) continue; // named but missing: check reports it; nothing to keep
      if (young(id)) {
        kept.push({ id, entries });
        for (const e of entries) placed.add(blobIdOf(e.id));
      }
    }
    for (const [id, entries] of packs) {
      if (!stored.has(id) || young(id)) continue;
      const live = entries.filter((e) => {
        const id = blobIdOf(e.id);
        return used.has(id) && !placed.has(id);
      });
      const liveBytes = live.reduce((n, e) => n + e.length, 0);
      const allBytes = entries.reduce((n, e) => n + e.length, 0);
      if (live.length === 0) {
        toDelete.push(id);
      } else if (live.length === entries.length || allBytes - liveBytes < threshold * allBytes) {
        kept.push({ id, entries });
        for (const e of entries) placed.add(blobIdOf(e.id));
      } else {
        toRepack.push({ id, entries: live });
        for (const e of live) placed.add(blobIdOf(e.id));
      }
      result.blobsRemoved += entries.length - live.length;
    }

    // Write: repacked blobs into new packs (BlobWriter writes their index), then one index for the kept packs.
    const writer = new BlobWriter(repo, { ignoreIndex: true, maxUploads: 2, ...(options.signal ? { signal: options.signal } : {}) });
    for (const p of toRepack) {
      const bytes = await repo.store.get(packKey(p.id));
      for (const e of p.entries) {
        await writer.throttle();
        writer.addSealed(e.type, e.id, e.flags, e.rawLength, Buffer.from(bytes.subarray(e.offset, e.offset + e.length)));
      }
    }
    await writer.flush();
    result.packsWritten = writer.stats.packs;
    result.packsRepacked = toRepack.length;
    let newIndexName: string | undefined;
    if (kept.length > 0) {
      const { name, bytes } = encodeIndex(repo.keys, kept);
      await repo.store.put(`index/${name}`, bytes);
      newIndexName = name;
    }

    // Delete: old index files, then packs no index names any more, then old unindexed packs.
    for (const name of indexNames) if (name !== newIndexName) await repo.store.delete(`index/${name}`);
    for (const id of [...toDelete, ...toRepack.map((p) => p.id)]) {
      result.bytesFreed += stored.get(id)?.size ?? 0;
      await repo.store.delete(packKey(id));
    }
    result.packsDeleted = toDelete.length;
    for (const [id, info] of stored) {
      if (packs.has(id) || (writersMayRun && now - info.lastModified.getTime() < grace)) continue;
      await repo.store.delete(packKey(id));
      result.unindexedPacksDeleted++;
      result.bytesFreed += info.size;
    }
    let after = 0;
    for await (const _ of repo.store.list('index/')) after++;
    result.indexFilesAfter = after;
    return result;
  } finally {
    await lock.release().catch(() => undefined);
  }
}
