/**
 * Directory listings as content (docs/repository-format.md §6): NDJSON entries cut at line ends into tree blobs, so a
 * listing is written and read as a stream whatever the directory's size.
 */

/** A content piece: a blob ID, a zero run, or a slice [o, o+l) of a bundle blob holding several small files. */
export type ContentItem = string | { z: number } | BundleSlice;
export interface BundleSlice {
  b: string;
  o: number;
  l: number;
}
export const isBundleSlice = (item: ContentItem): item is BundleSlice => typeof item === 'object' && 'b' in item;
export const isZeroRun = (item: ContentItem | undefined): item is { z: number } => typeof item === 'object' && 'z' in item;

export interface TreeEntry {
  n: string;
  t: 'f' | 'd' | 'l';
  m: number;
  u: number;
  g: number;
  mt: string;
  ct?: string;
  i?: string;
  s?: number;
  c?: ContentItem[];
  /** Small file content, inline (base64). */
  in?: string;
  sub?: string[];
  tg?: string;
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
  private readonly ids: string[] = [];
  private pending: Promise<void>[] = [];

  constructor(private readonly saveBlob: (plaintext: Buffer) => Promise<string>) {}

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
    this.ids.push('');
    this.pending.push(this.saveBlob(data).then((id) => void (this.ids[slot] = id)));
  }

  /** The tree blob IDs of the listing (an empty directory has one empty blob, so every listing has an ID). */
  async finish(): Promise<string[]> {
    if (this.bytes > 0 || this.ids.length === 0) this.cut();
    await Promise.all(this.pending);
    this.pending = [];
    return this.ids;
  }
}

/** Entries of a listing, blob by blob. */
export async function* readTree(ids: readonly string[], loadBlob: (id: string) => Promise<Buffer>): AsyncIterable<TreeEntry> {
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
