/**
 * Times in Velero's objects and stored files are Kubernetes `metav1.Time`: RFC 3339 in UTC with whole seconds
 * (`2025-10-01T10:00:00Z`; the fraction is truncated, not rounded). Every time cairn writes into a status, an
 * annotation-free stored file (volume info, item operations) or a sync stamp goes through here, so `velero backup
 * get` and `kubectl` show the same text for cairn's objects as for Velero's.
 */
export function statusTime(d: Date): string {
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new RangeError('statusTime: invalid date');
  return new Date(ms - (((ms % 1000) + 1000) % 1000)).toISOString().replace(/\.000Z$/, 'Z');
}

/** `statusTime` of a time that may be missing. */
export function optionalStatusTime(d: Date | undefined): string | undefined {
  return d ? statusTime(d) : undefined;
}
