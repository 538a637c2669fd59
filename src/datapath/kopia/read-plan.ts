/**
 * Groups the contents of small files into pack reads: contents that lie close together in one pack (kopia writes a
 * directory's files one after another) are read with one ranged request and cut apart here. On an object store each
 * request costs far more than the bytes in a small gap, so twenty thousand small files become a few hundred reads.
 */
import type { ContentInfo } from './index.js';

/** Read the bytes between two contents rather than make a second request when the gap is at most this. */
export const MAX_GAP = 64 * 1024;
/** One read covers at most this many bytes (bounds the memory a batch holds). */
export const MAX_SPAN = 4 * 1024 * 1024;

/** One ranged read of a pack and the contents it covers, in pack order. */
export interface PackRead<T> {
  packBlobId: string;
  offset: number;
  length: number;
  items: T[];
}

/** Plans the reads for `items` (each with its content's index entry); every item lands in exactly one read. */
export function planPackReads<T extends { info: ContentInfo }>(items: readonly T[], maxGap = MAX_GAP, maxSpan = MAX_SPAN): PackRead<T>[] {
  const sorted = [...items].sort((a, b) => (a.info.packBlobId < b.info.packBlobId ? -1 : a.info.packBlobId > b.info.packBlobId ? 1 : a.info.packOffset - b.info.packOffset));
  const reads: PackRead<T>[] = [];
  let current: PackRead<T> | undefined;
  for (const item of sorted) {
    const { packBlobId, packOffset, packedLength } = item.info;
    const end = packOffset + packedLength;
    const fits =
      current !== undefined &&
      current.packBlobId === packBlobId &&
      packOffset - (current.offset + current.length) <= maxGap &&
      end - current.offset <= maxSpan;
    if (current && fits) {
      // Two entries may share bytes (the same content under two names): the range only grows.
      current.length = Math.max(current.length, end - current.offset);
      current.items.push(item);
    } else {
      current = { packBlobId, offset: packOffset, length: packedLength, items: [item] };
      reads.push(current);
    }
  }
  return reads;
}
