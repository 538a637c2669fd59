/**
 * Groups blobs (cairn) or contents (kopia) that lie close together in one pack into ranged reads: one request reads
 * them all and the caller cuts them apart. Backups write a directory's files, and a file's chunks, one after another,
 * so on an object store, where each request costs far more than the bytes of a small gap, twenty thousand small
 * files become a few hundred reads. Both restore paths (restorer.ts, kopia/restore.ts) plan their reads here.
 */

/** Read the bytes between two items rather than make a second request when the gap is at most this. */
export const MAX_GAP = 64 * 1024;
/** One read covers at most this many bytes (bounds the memory a read holds); a larger item is read alone. */
export const MAX_SPAN = 4 * 1024 * 1024;

/** Where an item's bytes lie: a pack (by its ID: a cairn PackId, a kopia blob name), and a range of it. */
export interface PackSpan<P extends string = string> {
  pack: P;
  offset: number;
  length: number;
}

/** One ranged read of a pack and the items it covers, in pack order. */
export interface PackRead<T, P extends string = string> extends PackSpan<P> {
  items: T[];
}

export interface PlanLimits {
  maxGap?: number;
  maxSpan?: number;
}

/**
 * Plans the reads for `items` (`spanOf` says where each lies); every item lands in exactly one read. Reads come in
 * pack order (by pack name, then offset).
 */
export function planPackReads<T, P extends string = string>(items: readonly T[], spanOf: (item: T) => PackSpan<P>, limits: PlanLimits = {}): PackRead<T, P>[] {
  const maxGap = limits.maxGap ?? MAX_GAP;
  const maxSpan = limits.maxSpan ?? MAX_SPAN;
  const sorted = items.map((item) => ({ item, span: spanOf(item) }));
  sorted.sort((a, b) => (a.span.pack < b.span.pack ? -1 : a.span.pack > b.span.pack ? 1 : a.span.offset - b.span.offset));
  const reads: PackRead<T, P>[] = [];
  let current: PackRead<T, P> | undefined;
  for (const { item, span } of sorted) {
    const end = span.offset + span.length;
    const fits = current !== undefined && current.pack === span.pack && span.offset - (current.offset + current.length) <= maxGap && end - current.offset <= maxSpan;
    if (current && fits) {
      // Two items may share bytes (the same content under two names): the range only grows.
      current.length = Math.max(current.length, end - current.offset);
      current.items.push(item);
    } else {
      current = { pack: span.pack, offset: span.offset, length: span.length, items: [item] };
      reads.push(current);
    }
  }
  return reads;
}
