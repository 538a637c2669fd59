/**
 * Listings (tree blobs) read a whole tree pack at a time.
 *
 * Why: a backup compares every directory with its listing in the parent snapshot, and a restore reads every listing
 * it restores. One ranged read per listing is a request per directory: on S3 an unchanged re-run of a tree of ~20,000
 * directories took 28 s, most of it those requests, against 2 s from a local file system. Tree blobs have packs of
 * their own (blob-writer.ts, at most ~2 MiB), written in the order a backup finishes directories, so the listings a
 * walk reads next are mostly in the pack it read last. Here the first listing read from a tree pack fetches the span of
 * every tree blob in it, and the next few packs' spans are kept, so the next listings are served from memory.
 */
import type { ObjectStore } from '../plugins/object-store/types.js';
import type { PackId } from './ids.js';
import type { MasterIndex } from './index-file.js';
import { BlobType, packKey } from './pack.js';

/** A span larger than this (a listing larger than a pack, a pack of older making) is read blob by blob. */
const MAX_SPAN = 8 << 20;
/** Tree pack spans kept at once (at most ~2 MiB each). */
const KEPT = 6;

interface Span {
  start: number;
  end: number;
}

export class TreePackReads {
  /** Per pack (by number), the span of its tree blobs; made on the first read, from the index as it is then. */
  private spans: Map<number, Span> | undefined;
  /** Fetched spans, least recently used first. */
  private readonly kept = new Map<number, Promise<Buffer>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly index: MasterIndex,
  ) {}

  /**
   * The bytes [offset, offset + length) of tree pack `pack` (number `packNumber`) from its whole span, or undefined
   * when that pack is not read whole here (the caller reads the range itself).
   */
  read(pack: PackId, packNumber: number, offset: number, length: number): Promise<Buffer> | undefined {
    this.spans ??= this.index.spansOf(BlobType.Tree);
    const span = this.spans.get(packNumber);
    if (!span || offset < span.start || offset + length > span.end || span.end - span.start > MAX_SPAN) return undefined;
    let bytes = this.kept.get(packNumber);
    if (bytes) this.kept.delete(packNumber);
    else {
      const fetched = this.store.get(packKey(pack), { range: { offset: span.start, length: span.end - span.start } });
      // A failed read is not kept: the next listing of the pack tries again.
      fetched.catch(() => void (this.kept.get(packNumber) === fetched && this.kept.delete(packNumber)));
      bytes = fetched;
    }
    this.kept.set(packNumber, bytes);
    if (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value!);
    return bytes.then((b) => b.subarray(offset - span.start, offset - span.start + length));
  }
}
