/**
 * Pack byte layout (docs/repository-format.md §4.1): sealed blobs back to back, then the sealed header, its length
 * and the "CAIRNPK1" trailer. Blobs are sealed straight into one preallocated pack buffer, so a blob's bytes are
 * copied once on the way out.
 */
import { plainHash, sealFile, openFile, type MasterKeys } from './crypto.js';
import type { PackId } from './ids.js';

export const PACK_TRAILER = Buffer.from('CAIRNPK1');
export const ENTRY_BYTES = 46;

export const BlobType = { Data: 0, Tree: 1 } as const;
export type BlobType = (typeof BlobType)[keyof typeof BlobType];
export const FLAG_ZSTD = 1;

export interface PackEntry {
  type: BlobType;
  flags: number;
  id: Buffer;
  offset: number;
  length: number;
  rawLength: number;
}

export function encodeEntries(entries: readonly PackEntry[], out: Buffer, at: number): number {
  for (const e of entries) {
    out[at] = e.type;
    out[at + 1] = e.flags;
    e.id.copy(out, at + 2);
    out.writeUInt32LE(e.offset, at + 34);
    out.writeUInt32LE(e.length, at + 38);
    out.writeUInt32LE(e.rawLength, at + 42);
    at += ENTRY_BYTES;
  }
  return at;
}

export function decodeEntry(buf: Buffer, at: number): PackEntry {
  return {
    type: buf[at] as BlobType,
    flags: buf[at + 1]!,
    id: Buffer.from(buf.subarray(at + 2, at + 34)),
    offset: buf.readUInt32LE(at + 34),
    length: buf.readUInt32LE(at + 38),
    rawLength: buf.readUInt32LE(at + 42),
  };
}

/** A pack's object key: `data/<first two hex digits>/<id>`. */
export function packKey(id: PackId): string {
  return `data/${id.slice(0, 2)}/${id}`;
}

/** The pack ID of an object key listed under `data/` (its last part). */
export function packIdOfKey(key: string): PackId {
  return key.slice(key.lastIndexOf('/') + 1) as PackId;
}

export class PackBuilder {
  readonly entries: PackEntry[] = [];
  private size = 0;

  constructor(
    readonly type: BlobType,
    private readonly buffer: Buffer,
  ) {}

  get bytes(): number {
    return this.size;
  }

  get count(): number {
    return this.entries.length;
  }

  /** Room left for sealed blobs, keeping space for the header of one more entry and the trailer. */
  fits(sealedLength: number): boolean {
    return this.size + sealedLength + (this.entries.length + 1) * ENTRY_BYTES + 4 + 28 + 12 <= this.buffer.length;
  }

  /** Lets `write` seal a blob at the current end; records it in the header. */
  append(id: Buffer, flags: number, rawLength: number, write: (target: Buffer, offset: number) => number): void {
    const length = write(this.buffer, this.size);
    this.entries.push({ type: this.type, flags, id, offset: this.size, length, rawLength });
    this.size += length;
  }

  /** Seals the header, appends it and the trailer; returns the pack's name and bytes (a view of the buffer). */
  finish(keys: MasterKeys): { id: string; bytes: Buffer; entries: PackEntry[] } {
    const { bytes, entries } = this.finishUnnamed(keys);
    return { id: plainHash([bytes]).toString('hex'), bytes, entries };
  }

  /** Like finish(), for a caller that computes the name (the BLAKE3 of the bytes) elsewhere. */
  finishUnnamed(keys: MasterKeys): { bytes: Buffer; entries: PackEntry[] } {
    const plain = Buffer.allocUnsafe(4 + this.entries.length * ENTRY_BYTES);
    plain.writeUInt32LE(this.entries.length, 0);
    encodeEntries(this.entries, plain, 4);
    const header = sealFile(keys, 'packheader', plain);
    let at = this.size;
    header.copy(this.buffer, at);
    at += header.length;
    this.buffer.writeUInt32LE(header.length, at);
    at += 4;
    PACK_TRAILER.copy(this.buffer, at);
    at += PACK_TRAILER.length;
    return { bytes: this.buffer.subarray(0, at), entries: this.entries };
  }
}

/** Reads a pack's header from its tail (the last bytes of the object). */
export function parsePackHeader(keys: MasterKeys, tail: Buffer, packSize: number, name: string): { entries: PackEntry[]; headerStart: number } | { needBytes: number } {
  if (tail.length < 12 || !tail.subarray(tail.length - 8).equals(PACK_TRAILER)) throw new Error(`pack ${name} has no valid trailer (truncated or not a pack)`);
  const hlen = tail.readUInt32LE(tail.length - 12);
  if (hlen + 12 > packSize) throw new Error(`pack ${name} has an invalid header length`);
  if (hlen + 12 > tail.length) return { needBytes: hlen + 12 };
  const sealed = tail.subarray(tail.length - 12 - hlen, tail.length - 12);
  const plain = openFile(keys, 'packheader', sealed, `header of pack ${name}`);
  const n = plain.readUInt32LE(0);
  if (plain.length !== 4 + n * ENTRY_BYTES) throw new Error(`pack ${name} has a malformed header`);
  const entries: PackEntry[] = [];
  for (let i = 0; i < n; i++) entries.push(decodeEntry(plain, 4 + i * ENTRY_BYTES));
  return { entries, headerStart: packSize - 12 - hlen };
}
