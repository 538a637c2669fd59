/** Walks every blob a snapshot references (tree blobs once each), for check and maintenance. */
import type { BlobId } from './ids.js';
import type { BlobLoader } from './repository-roles.js';
import type { Snapshot } from './snapshots.js';
import { isBundleSlice, readTree } from './tree.js';

export interface ReferenceVisitor {
  tree(id: BlobId): void;
  data(id: BlobId): void;
  /** A file's slice of a bundle blob, ending at `end` in its plaintext (after data() for the bundle). */
  slice?(id: BlobId, end: number): void;
}

/**
 * Visits the blobs of each snapshot; subtrees already seen (in `seenTrees`) are not walked again. Listings are read
 * with loadTreeBlob, a whole tree pack at a time (tree-packs.ts): one ranged read per listing made a walk of the 1 GB
 * real-tree benchmark set from MinIO 7,700 requests in turn, ~18 s of a check or a maintenance run that now takes 1.4 s.
 */
export async function walkSnapshot(repo: Pick<BlobLoader, 'loadTreeBlob'>, snap: Pick<Snapshot, 'tree'>, seenTrees: Set<BlobId>, visit: ReferenceVisitor, signal?: AbortSignal): Promise<void> {
  const walk = async (ids: BlobId[]): Promise<void> => {
    const fresh = ids.filter((id) => !seenTrees.has(id));
    if (fresh.length === 0 && ids.length > 0) return;
    for (const id of ids) {
      seenTrees.add(id);
      visit.tree(id);
    }
    for await (const e of readTree(ids, (id) => repo.loadTreeBlob(id))) {
      signal?.throwIfAborted();
      if (e.t === 'd') await walk(e.sub ?? []);
      else if (e.c) {
        for (const item of e.c) {
          if (typeof item === 'string') visit.data(item);
          else if (isBundleSlice(item)) {
            visit.data(item.b);
            visit.slice?.(item.b, item.o + item.l);
          }
        }
      }
    }
  };
  await walk(snap.tree);
}
