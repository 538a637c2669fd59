/** Walks every blob a snapshot references (tree blobs once each), for check and maintenance. */
import type { Repository, SnapshotWithId } from './repository.js';
import { isBundleSlice, readTree } from './tree.js';

export interface ReferenceVisitor {
  tree(hexId: string): void;
  data(hexId: string): void;
  /** A file's slice of a bundle blob, ending at `end` in its plaintext (after data() for the bundle). */
  slice?(hexId: string, end: number): void;
}

/** Visits the blobs of each snapshot; subtrees already seen (in `seenTrees`) are not walked again. */
export async function walkSnapshot(repo: Repository, snap: SnapshotWithId, seenTrees: Set<string>, visit: ReferenceVisitor, signal?: AbortSignal): Promise<void> {
  const walk = async (ids: string[]): Promise<void> => {
    const fresh = ids.filter((id) => !seenTrees.has(id));
    if (fresh.length === 0 && ids.length > 0) return;
    for (const id of ids) {
      seenTrees.add(id);
      visit.tree(id);
    }
    for await (const e of readTree(ids, (id) => repo.loadBlob(id))) {
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
