/**
 * Directory listings as content (docs/repository-format.md §6): NDJSON entries cut at line ends into tree blobs, so a
 * listing is written and read as a stream whatever the directory's size.
 */
import type { BlobId } from './ids.js';

/** A content piece: a blob ID, a zero run, or a slice [o, o+l) of a bundle blob holding several small files. */
export type ContentItem = BlobId | { z: number } | BundleSlice;
/** Bytes [o, o + l) of the plaintext of bundle blob `b` (docs/repository-format.md §6.1). */
export interface BundleSlice {
  /** The bundle blob. */
  b: BlobId;
  /** Offset of the file's bytes in the bundle's plaintext. */
  o: number;
  /** Length of the file's bytes (its size). */
  l: number;
}
export const isBundleSlice = (item: ContentItem): item is BundleSlice => typeof item === 'object' && 'b' in item;
export const isZeroRun = (item: ContentItem | undefined): item is { z: number } => typeof item === 'object' && 'z' in item;

/**
 * One line of a listing (docs/repository-format.md §6). The short field names are the stored JSON keys, part of the
 * format: they must not change.
 */
export interface TreeEntry {
  /** Name (valid UTF-8). */
  n: string;
  /** Type: `f` file, `d` directory, `l` symlink. */
  t: 'f' | 'd' | 'l';
  /** Mode: the permission bits (`mode & 0o7777`). */
  m: number;
  /** Owner uid. */
  u: number;
  /** Owner gid. */
  g: number;
  /** mtime in nanoseconds since the epoch, a decimal string (utimeSeconds turns it into what utimes takes). */
  mt: string;
  /** ctime in nanoseconds since the epoch, a decimal string: with `i`, how a backup tells an unchanged file. */
  ct?: string;
  /** Inode number, a decimal string (change detection). */
  i?: string;
  /** Size in bytes (files). */
  s?: number;
  /** Content (files): blob IDs, zero runs and bundle slices in order; absent when the content is inline (`in`). */
  c?: ContentItem[];
  /** Content of a file of at most 256 bytes, inline (base64): no blob, no index entry. */
  in?: string;
  /** The tree blobs of a directory's listing. */
  sub?: BlobId[];
  /** Symlink target. */
  tg?: string;
  /**
   * Hard link: the snapshot-relative path of the first name of this file in the snapshot. Its content is repeated
   * (so a sub-path restore works); the data is stored once.
   */
  hl?: string;
  /** Link count when above 1 (the first name of a hard-linked file; later names carry `hl`). */
  nl?: number;
}

export const TREE_BLOB_TARGET = 512 * 1024;

/**
 * A stored mtime (nanoseconds) as the seconds Node's utimes/futimes take. A double holds about a quarter of a
 * microsecond at today's times and libuv truncates it to nanoseconds, so x.123 s would come back as x.122999…: half
 * a microsecond is added so that the restored time is right to the microsecond.
 */
export function utimeSeconds(mtNs: string): number {
  return (Number(BigInt(mtNs) / 1000n) + 0.5) / 1e6;
}

/** Collects a listing's lines and hands off a blob each time TREE_BLOB_TARGET bytes are buffered. */
export class TreeWriter {
  private parts: string[] = [];
  private bytes = 0;
  private readonly ids: BlobId[] = [];
  private pending: Promise<void>[] = [];

  constructor(private readonly saveBlob: (plaintext: Buffer) => Promise<BlobId>) {}

  add(entry: TreeEntry): void {
    const line = JSON.stringify(entry) + '\n';
    this.parts.push(line);
    this.bytes += line.length;
    if (this.bytes >= TREE_BLOB_TARGET) this.cut();
  }

  private cut(): void {
    const data = Buffer.from(this.parts.join(''));
    this.parts = [];
    this.bytes = 0;
    const slot = this.ids.length;
    this.ids.push('' as BlobId);
    this.pending.push(this.saveBlob(data).then((id) => void (this.ids[slot] = id)));
  }

  /** The tree blob IDs of the listing (an empty directory has one empty blob, so every listing has an ID). */
  async finish(): Promise<BlobId[]> {
    if (this.bytes > 0 || this.ids.length === 0) this.cut();
    await Promise.all(this.pending);
    this.pending = [];
    return this.ids;
  }
}

/** Entries of a listing, blob by blob. */
export async function* readTree(ids: readonly BlobId[], loadBlob: (id: BlobId) => Promise<Buffer>): AsyncIterable<TreeEntry> {
  for (const id of ids) {
    const text = (await loadBlob(id)).toString('utf8');
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      yield JSON.parse(text.slice(from, nl)) as TreeEntry;
      from = nl + 1;
    }
  }
}
