/**
 * Index files (docs/repository-format.md §4.3) and the in-memory index of every blob in the repository.
 */
import { openFile, plainHash, sealFile, type MasterKeys } from './crypto.js';
import { decodeEntry, encodeEntries, ENTRY_BYTES, type BlobType, type PackEntry } from './pack.js';
import { blobIdOf, packIdOf, writeId, type BlobId, type PackId } from './ids.js';

const MAGIC = Buffer.from('CAIRNIX1');

export interface IndexedPack {
  id: PackId;
  entries: PackEntry[];
}

export function encodeIndex(keys: MasterKeys, packs: readonly IndexedPack[]): { name: string; bytes: Buffer } {
  let size = MAGIC.length + 4;
  for (const p of packs) size += 32 + 4 + p.entries.length * ENTRY_BYTES;
  const plain = Buffer.allocUnsafe(size);
  MAGIC.copy(plain, 0);
  plain.writeUInt32LE(packs.length, 8);
  let at = 12;
  for (const p of packs) {
    writeId(p.id, plain, at);
    plain.writeUInt32LE(p.entries.length, at + 32);
    at = encodeEntries(p.entries, plain, at + 36);
  }
  const bytes = sealFile(keys, 'index', plain);
  return { name: plainHash([bytes]).toString('hex'), bytes };
}

/**
 * Adds an index file's entries straight to the in-memory index (no object per entry: loading the index is part of
 * every command's fixed cost). Returns the number of packs.
 */
export function loadIndexInto(keys: MasterKeys, sealed: Buffer, name: string, index: MasterIndex): number {
  const plain = openFile(keys, 'index', sealed, `index ${name}`);
  if (!plain.subarray(0, 8).equals(MAGIC)) throw new Error(`index ${name}: unknown format`);
  const count = plain.readUInt32LE(8);
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + 36 > plain.length) throw new Error(`index ${name}: malformed`);
    const id = packIdOf(plain, at);
    const n = plain.readUInt32LE(at + 32);
    at += 36;
    if (at + n * ENTRY_BYTES > plain.length) throw new Error(`index ${name}: malformed`);
    index.addEncodedPack(id, plain, at, n);
    at += n * ENTRY_BYTES;
  }
  if (at !== plain.length) throw new Error(`index ${name}: malformed`);
  return count;
}

export function decodeIndex(keys: MasterKeys, sealed: Buffer, name: string): IndexedPack[] {
  const plain = openFile(keys, 'index', sealed, `index ${name}`);
  if (!plain.subarray(0, 8).equals(MAGIC)) throw new Error(`index ${name}: unknown format`);
  const count = plain.readUInt32LE(8);
  const packs: IndexedPack[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    const id = packIdOf(plain, at);
    const n = plain.readUInt32LE(at + 32);
    at += 36;
    const entries: PackEntry[] = [];
    for (let j = 0; j < n; j++, at += ENTRY_BYTES) entries.push(decodeEntry(plain, at));
    packs.push({ id, entries });
  }
  if (at !== plain.length) throw new Error(`index ${name}: malformed`);
  return packs;
}

/** Where one blob lives. `pack` indexes MasterIndex.packIds. */
export interface BlobLocation {
  pack: number;
  type: BlobType;
  flags: number;
  offset: number;
  length: number;
  rawLength: number;
}

/**
 * Every known blob: ID → location. Packs are interned to a number, and locations live in typed-array columns
 * (one row per blob, 20 bytes) instead of one object per blob: a repository of millions of small files keeps
 * millions of entries, and per-entry objects were most of a backup's heap. get() builds a BlobLocation on demand.
 */
export class MasterIndex {
  readonly packIds: PackId[] = [];
  private readonly packNumbers = new Map<PackId, number>();
  private readonly rows = new Map<BlobId, number>();
  /** pack number, offset, length, rawLength, type << 8 | flags: five uint32 per row. */
  private columns = new Uint32Array(5 * 1024);

  get size(): number {
    return this.rows.size;
  }

  private packNumber(id: PackId): number {
    let n = this.packNumbers.get(id);
    if (n === undefined) {
      n = this.packIds.length;
      this.packIds.push(id);
      this.packNumbers.set(id, n);
    }
    return n;
  }

  private addRow(key: BlobId, pack: number, offset: number, length: number, rawLength: number, type: number, flags: number): void {
    if (this.rows.has(key)) return;
    const row = this.rows.size;
    if ((row + 1) * 5 > this.columns.length) {
      const grown = new Uint32Array(this.columns.length * 2);
      grown.set(this.columns);
      this.columns = grown;
    }
    const c = this.columns;
    const at = row * 5;
    c[at] = pack;
    c[at + 1] = offset;
    c[at + 2] = length;
    c[at + 3] = rawLength;
    c[at + 4] = (type << 8) | flags;
    this.rows.set(key, row);
  }

  addPack(pack: IndexedPack): void {
    const n = this.packNumber(pack.id);
    for (const e of pack.entries) this.addRow(blobIdOf(e.id), n, e.offset, e.length, e.rawLength, e.type, e.flags);
  }

  /** Adds `count` entries in the pack entry encoding (pack.ts) from buf[at…]. */
  addEncodedPack(packId: PackId, buf: Buffer, at: number, count: number): void {
    const n = this.packNumber(packId);
    for (let j = 0; j < count; j++, at += ENTRY_BYTES) {
      this.addRow(buf.toString('hex', at + 2, at + 34) as BlobId, n, buf.readUInt32LE(at + 34), buf.readUInt32LE(at + 38), buf.readUInt32LE(at + 42), buf[at]!, buf[at + 1]!);
    }
  }

  has(id: BlobId): boolean {
    return this.rows.has(id);
  }

  get(id: BlobId): BlobLocation | undefined {
    const row = this.rows.get(id);
    return row === undefined ? undefined : this.location(row);
  }

  private location(row: number): BlobLocation {
    const c = this.columns;
    const at = row * 5;
    return { pack: c[at]!, offset: c[at + 1]!, length: c[at + 2]!, rawLength: c[at + 3]!, type: (c[at + 4]! >>> 8) as BlobType, flags: c[at + 4]! & 0xff };
  }

  packOf(loc: BlobLocation): PackId {
    return this.packIds[loc.pack]!;
  }

  /** Per pack (by number), the span from the first to the end of the last of its blobs of `type`. */
  spansOf(type: BlobType): Map<number, { start: number; end: number }> {
    const spans = new Map<number, { start: number; end: number }>();
    const c = this.columns;
    for (let at = 0, end = this.rows.size * 5; at < end; at += 5) {
      if (c[at + 4]! >>> 8 !== type) continue;
      const pack = c[at]!;
      const start = c[at + 1]!;
      const stop = start + c[at + 2]!;
      const span = spans.get(pack);
      if (!span) spans.set(pack, { start, end: stop });
      else {
        if (start < span.start) span.start = start;
        if (stop > span.end) span.end = stop;
      }
    }
    return spans;
  }

  *entries(): IterableIterator<[BlobId, BlobLocation]> {
    for (const [key, row] of this.rows) yield [key, this.location(row)];
  }
}
