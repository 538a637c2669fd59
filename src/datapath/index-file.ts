/**
 * Index files (docs/repository-format.md §4.3) and the in-memory index of every blob in the repository.
 */
import { openFile, plainHash, sealFile, type MasterKeys } from './crypto.js';
import { decodeEntry, encodeEntries, ENTRY_BYTES, type BlobType, type PackEntry } from './pack.js';

const MAGIC = Buffer.from('CAIRNIX1');

export interface IndexedPack {
  id: string;
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
    Buffer.from(p.id, 'hex').copy(plain, at);
    plain.writeUInt32LE(p.entries.length, at + 32);
    at = encodeEntries(p.entries, plain, at + 36);
  }
  const bytes = sealFile(keys, 'index', plain);
  return { name: plainHash([bytes]).toString('hex'), bytes };
}

export function decodeIndex(keys: MasterKeys, sealed: Buffer, name: string): IndexedPack[] {
  const plain = openFile(keys, 'index', sealed, `index ${name}`);
  if (!plain.subarray(0, 8).equals(MAGIC)) throw new Error(`index ${name}: unknown format`);
  const count = plain.readUInt32LE(8);
  const packs: IndexedPack[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    const id = plain.subarray(at, at + 32).toString('hex');
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
 * Every known blob: hex ID → location. Packs are interned to a number, and locations live in typed-array columns
 * (one row per blob, 20 bytes) instead of one object per blob: a repository of millions of small files keeps
 * millions of entries, and per-entry objects were most of a backup's heap. get() builds a BlobLocation on demand.
 */
export class MasterIndex {
  readonly packIds: string[] = [];
  private readonly packNumbers = new Map<string, number>();
  private readonly rows = new Map<string, number>();
  /** pack number, offset, length, rawLength, type << 8 | flags: five uint32 per row. */
  private columns = new Uint32Array(5 * 1024);

  get size(): number {
    return this.rows.size;
  }

  addPack(pack: IndexedPack): void {
    let n = this.packNumbers.get(pack.id);
    if (n === undefined) {
      n = this.packIds.length;
      this.packIds.push(pack.id);
      this.packNumbers.set(pack.id, n);
    }
    for (const e of pack.entries) {
      const key = e.id.toString('hex');
      if (this.rows.has(key)) continue;
      const row = this.rows.size;
      if ((row + 1) * 5 > this.columns.length) {
        const grown = new Uint32Array(this.columns.length * 2);
        grown.set(this.columns);
        this.columns = grown;
      }
      const c = this.columns;
      const at = row * 5;
      c[at] = n;
      c[at + 1] = e.offset;
      c[at + 2] = e.length;
      c[at + 3] = e.rawLength;
      c[at + 4] = (e.type << 8) | e.flags;
      this.rows.set(key, row);
    }
  }

  has(hexId: string): boolean {
    return this.rows.has(hexId);
  }

  get(hexId: string): BlobLocation | undefined {
    const row = this.rows.get(hexId);
    return row === undefined ? undefined : this.location(row);
  }

  private location(row: number): BlobLocation {
    const c = this.columns;
    const at = row * 5;
    return { pack: c[at]!, offset: c[at + 1]!, length: c[at + 2]!, rawLength: c[at + 3]!, type: (c[at + 4]! >>> 8) as BlobType, flags: c[at + 4]! & 0xff };
  }

  packOf(loc: BlobLocation): string {
    return this.packIds[loc.pack]!;
  }

  *entries(): IterableIterator<[string, BlobLocation]> {
    for (const [key, row] of this.rows) yield [key, this.location(row)];
  }
}
