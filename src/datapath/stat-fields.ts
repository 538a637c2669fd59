/**
 * The lstat fields that tell whether a directory entry changed, as bigints in a fixed order: what the listing cache
 * signs (listing-cache.ts) and the first fields the scan worker sends per name (scan-worker.ts).
 */
import type { EntryStat } from './scan-ahead.js';

/** mode, uid, gid, size, mtimeNs, ctimeNs, ino, nlink. */
export const CHANGE_FIELDS = 8;

export function writeChangeFields(f: BigInt64Array, at: number, st: EntryStat): void {
  f[at] = st.mode;
  f[at + 1] = st.uid;
  f[at + 2] = st.gid;
  f[at + 3] = st.size;
  f[at + 4] = st.mtimeNs;
  f[at + 5] = st.ctimeNs;
  f[at + 6] = st.ino;
  f[at + 7] = st.nlink;
}
