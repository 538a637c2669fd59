/**
 * `check`: structure and authentication of everything reachable (config, keys, indexes, pack headers, snapshots,
 * trees), that every referenced blob is indexed and every indexed pack exists; with readData, every pack is read,
 * its name (hash) verified and every blob authenticated and checked against its ID (on worker threads).
 */
import { Semaphore } from '../plugins/object-store/limit.js';
import { usableCpus } from './cpu.js';
import { plainHash } from './crypto.js';
import { tuneHeapForDataPath } from './heap-tuning.js';
import { describeLock, LOCK_STALE_MS } from './locks.js';
import { blobIdOf, type BlobId, type PackId } from './ids.js';
import { packIdOfKey, packKey, parsePackHeader } from './pack.js';
import type { BlobIndex, BlobLoader, BlobVerifier, PackReader, RepoBasics, WithLocks, WithSnapshots } from './repository-roles.js';
import { walkSnapshot } from './walk-snapshots.js';

/** What check uses of a repository (repository-roles.ts): it lists and reads packs itself, besides the roles. */
export type CheckRepository = RepoBasics & BlobIndex & PackReader & BlobVerifier & Pick<BlobLoader, 'loadTreeBlob'> & WithSnapshots & WithLocks;

export interface CheckOptions {
  repository: CheckRepository;
  readData?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: { donePacks: number; totalPacks: number }) => void;
}

export interface CheckResult {
  snapshots: number;
  packs: number;
  blobs: number;
  readBytes: number;
  /** Problems that make data unrestorable or untrustworthy. */
  errors: string[];
  /** Harmless findings (garbage maintenance removes). */
  warnings: string[];
}

export async function check(options: CheckOptions): Promise<CheckResult> {
  const repo = options.repository;
  const result: CheckResult = { snapshots: 0, packs: 0, blobs: 0, readBytes: 0, errors: [], warnings: [] };
  const lock = await repo.locks.lock({ exclusive: false });
  for (const o of lock.others) {
    const whose = o.info ? describeLock(o.info) : `unreadable lock ${o.key}`;
    if (o.verdict === 'owner-gone') result.warnings.push(`removed ${whose}: its command is gone (left by an interrupted command)`);
    if (o.verdict === 'stale') result.warnings.push(`removed ${whose}: not refreshed for ${Math.round(LOCK_STALE_MS / 60_000)} minutes`);
  }
  try {
    try {
      await repo.loadIndex();
    } catch (err) {
      result.errors.push((err as Error).message);
    }
    result.blobs = repo.index.size;
    const stored = new Map<PackId, number>();
    for await (const o of repo.store.list('data/')) stored.set(packIdOfKey(o.key), o.size);
    const indexed = new Set(repo.index.packIds);
    result.packs = stored.size;
    for (const id of indexed) if (!stored.has(id)) result.errors.push(`pack ${id.slice(0, 12)} is named by an index but missing`);
    for (const id of stored.keys()) if (!indexed.has(id)) result.warnings.push(`pack ${id.slice(0, 12)} is not in any index (left by an interrupted backup; maintenance removes it)`);

    // Pack headers must agree with the index.
    const expected = new Map<PackId, Map<BlobId, { offset: number; length: number }>>();
    for (const [hex, loc] of repo.index.entries()) {
      const pack = repo.index.packOf(loc);
      let m = expected.get(pack);
      if (!m) expected.set(pack, (m = new Map()));
      m.set(hex, { offset: loc.offset, length: loc.length });
    }
    let done = 0;
    const progress = () => options.onProgress?.({ donePacks: ++done, totalPacks: indexed.size });
    if (options.readData) {
      await readEveryPack(repo, [...stored.keys()].filter((id) => indexed.has(id)), result, progress, options.signal);
    } else {
      for (const [id, size] of stored) {
        options.signal?.throwIfAborted();
        if (!indexed.has(id)) continue;
        try {
          const entries = await repo.readPackHeader(id, size);
          const inHeader = new Set(entries.map((e) => blobIdOf(e.id)));
          for (const hex of expected.get(id)?.keys() ?? []) {
            if (!inHeader.has(hex)) result.errors.push(`pack ${id.slice(0, 12)} does not contain blob ${hex.slice(0, 16)} its index names`);
          }
        } catch (err) {
          result.errors.push((err as Error).message);
        }
        progress();
      }
    }

    // Snapshots and trees: authenticated, complete.
    const snapshotIds = (await repo.snapshots.ids()).sort();
    const seen = new Set<BlobId>();
    for (const sid of snapshotIds) {
      try {
        const snap = await repo.snapshots.load(sid);
        result.snapshots++;
        const missing = new Set<BlobId>();
        const short = new Set<BlobId>();
        await walkSnapshot(repo, snap, seen, {
          tree: () => undefined,
          data: (hex) => {
            if (!repo.index.has(hex)) missing.add(hex);
          },
          slice: (hex, end) => {
            const loc = repo.index.get(hex);
            if (loc && end > loc.rawLength) short.add(hex);
          },
        }, options.signal);
        for (const hex of missing) result.errors.push(`snapshot ${sid.slice(0, 8)} references data blob ${hex.slice(0, 16)} which is in no index`);
        for (const hex of short) result.errors.push(`snapshot ${sid.slice(0, 8)} names bytes past the end of bundle ${hex.slice(0, 16)}`);
      } catch (err) {
        result.errors.push(`snapshot ${sid.slice(0, 8)}: ${(err as Error).message}`);
      }
    }
    return result;
  } finally {
    await lock.release().catch(() => undefined);
  }
}

/** Packs fetched while the one before is checked: the store's latency overlaps the opening of blobs. */
const PACKS_AHEAD = 1;

type Fetched = { bytes: Buffer } | { error: unknown };

/**
 * Reads every pack whole, checks its name (hash) and header, and opens every blob in it: authenticated, decompressed
 * and checked against its ID on the worker threads (one per usable CPU), several blobs at once, while the next packs
 * are fetched. The data path's heap settings are held meanwhile (every blob's buffers travel to a worker and back).
 */
async function readEveryPack(repo: CheckRepository, packs: PackId[], result: CheckResult, progress: () => void, signal: AbortSignal | undefined): Promise<void> {
  const heap = tuneHeapForDataPath();
  const cpus = usableCpus();
  repo.useWorkers(cpus);
  const opening = new Semaphore(Math.max(2, cpus * 2));
  const inflight = new Set<Promise<void>>();
  const fetches = new Map<number, Promise<Fetched>>();
  const fetch = (i: number): Promise<Fetched> =>
    repo.store.get(packKey(packs[i]!)).then(
      (bytes) => ({ bytes }),
      (error: unknown) => ({ error }),
    );
  try {
    for (let i = 0; i < packs.length; i++) {
      signal?.throwIfAborted();
      heap.check();
      for (let j = i; j <= Math.min(packs.length - 1, i + PACKS_AHEAD); j++) if (!fetches.has(j)) fetches.set(j, fetch(j));
      const fetched = await fetches.get(i)!;
      fetches.delete(i);
      const id = packs[i]!;
      try {
        if ('error' in fetched) throw fetched.error;
        const bytes = fetched.bytes;
        result.readBytes += bytes.length;
        if (plainHash([bytes]).toString('hex') !== id) throw new Error(`pack ${id.slice(0, 12)} content does not match its name (corrupted)`);
        const parsed = parsePackHeader(repo.keys, bytes, bytes.length, id.slice(0, 12));
        if ('needBytes' in parsed) throw new Error(`pack ${id.slice(0, 12)} header unreadable`);
        for (const e of parsed.entries) {
          await opening.acquire();
          const p = repo
            .verifySealedBlob(blobIdOf(e.id), e.flags, e.rawLength, bytes.subarray(e.offset, e.offset + e.length), id)
            .catch((err: unknown) => void result.errors.push((err as Error).message))
            .finally(() => {
              opening.release();
              inflight.delete(p);
            });
          inflight.add(p);
        }
      } catch (err) {
        result.errors.push((err as Error).message);
      }
      progress();
    }
  } finally {
    // Nothing may still be opening when the workers are closed (also after a cancel).
    await Promise.all(inflight);
    await repo.closeWorkers();
    heap.release();
  }
}
