/**
 * kopia's content indexes: where each content lives (pack blob, offset, packed length), whether it is deleted, and
 * how it was compressed. An index blob, once decrypted, is one of two binary formats, both a header followed by
 * entries sorted by key (the content ID's prefix letter or 0, then its hash bytes), so lookups binary-search the
 * buffer without unpacking it:
 *
 * - v1: header version(1)=1, key size(1), value size(2, BE), entry count(4, BE); each value is a 48-bit timestamp,
 *   format version(1), pack-name length(1), pack-name offset(4), pack offset(4, top bit = deleted), packed
 *   length(4); pack names live after the entries.
 * - v2: header version(1)=2, key size(1), entry size(2, BE), entry count(4, BE), pack count(4, BE), format
 *   count(1), base timestamp(4, BE); entries of timestamp delta(4), pack offset(4, top bit = deleted), original
 *   length(3), packed length(3), pack index(2), and optionally a format index(1), a pack index high byte(1) and the
 *   high 4 bits of both lengths(1); then pack records (name length(1), name offset(4)), then format records
 *   (compression header(4), format version(1), encryption key ID(1)), then the pack names.
 *
 * A content may be in several index blobs (rewritten, deleted, compacted): the entry with the latest timestamp wins,
 * a live one over a deleted one at equal times, then the larger pack name (kopia's rule).
 */
import { RepositoryCorruptError } from '../errors.js';

export interface ContentInfo {
  id: string;
  packBlobId: string;
  packOffset: number;
  packedLength: number;
  originalLength: number;
  timestampSeconds: number;
  deleted: boolean;
  compressionHeaderId: number;
  formatVersion: number;
  encryptionKeyId: number;
}

/** `k1a2b…` → key bytes: the prefix letter (0 without one), then the hash. */
export function contentKey(id: string): Buffer {
  const prefixed = id.length % 2 === 1;
  const hash = Buffer.from(prefixed ? id.slice(1) : id, 'hex');
  if (hash.length * 2 !== id.length - (prefixed ? 1 : 0)) throw new RepositoryCorruptError(`invalid content ID ${JSON.stringify(id)}`);
  return Buffer.concat([Buffer.from([prefixed ? id.charCodeAt(0) : 0]), hash]);
}

/** Key bytes → the content ID as kopia writes it. */
export function contentIdOf(key: Buffer): string {
  const p = key[0] ?? 0;
  return (p ? String.fromCharCode(p) : '') + key.subarray(1).toString('hex');
}

/** The hash part of a content ID (its last 16 bytes are the content's IV). */
export function contentHashOf(id: string): Buffer {
  return Buffer.from(id.length % 2 === 1 ? id.slice(1) : id, 'hex');
}

const EMPTY_KEY_SIZE = 255;

export class IndexBlob {
  private readonly version: number;
  private readonly keySize: number;
  private readonly stride: number;
  private readonly count: number;
  private readonly entriesOffset: number;
  // v2 only
  private readonly packsOffset: number = 0;
  private readonly packCount: number = 0;
  private readonly baseTimestamp: number = 0;
  private readonly formats: { compression: number; formatVersion: number; encryptionKeyId: number }[] = [];
  private readonly packNames = new Map<number, string>();

  constructor(
    private readonly data: Buffer,
    readonly name: string,
  ) {
    if (data.length < 8) throw new RepositoryCorruptError(`index blob ${name} is too short`);
    this.version = data[0]!;
    this.keySize = data[1]!;
    const valueSize = data.readUInt16BE(2);
    this.count = data.readUInt32BE(4);
    if (this.version === 1) {
      this.entriesOffset = 8;
      if (valueSize !== 20 && this.count > 0) throw new RepositoryCorruptError(`index blob ${name}: v1 entries of ${valueSize} bytes`);
    } else if (this.version === 2) {
      if (data.length < 17) throw new RepositoryCorruptError(`index blob ${name} is too short`);
      if (valueSize < 16 || valueSize > 19) throw new RepositoryCorruptError(`index blob ${name}: v2 entries of ${valueSize} bytes`);
      this.entriesOffset = 17;
      this.packCount = data.readUInt32BE(8);
      const formatCount = data[12]!;
      this.baseTimestamp = data.readUInt32BE(13);
      this.packsOffset = this.entriesOffset + this.count * (this.keySize + valueSize);
      const formatsOffset = this.packsOffset + this.packCount * 5;
      if (formatsOffset + formatCount * 6 > data.length) throw new RepositoryCorruptError(`index blob ${name} is truncated`);
      for (let i = 0; i < formatCount; i++) {
        const f = formatsOffset + i * 6;
        this.formats.push({ compression: data.readUInt32BE(f), formatVersion: data[f + 4]!, encryptionKeyId: data[f + 5]! });
      }
    } else {
      throw new RepositoryCorruptError(`index blob ${name} has unknown format version ${this.version}`);
    }
    this.stride = this.keySize + valueSize;
    if (this.count > 0 && (this.keySize <= 1 || this.keySize === EMPTY_KEY_SIZE)) throw new RepositoryCorruptError(`index blob ${name} has key size ${this.keySize}`);
    if (this.count > 0 && this.entriesOffset + this.count * this.stride > data.length) throw new RepositoryCorruptError(`index blob ${name} is truncated`);
  }

  get entryCount(): number {
    return this.count;
  }

  private keyAt(i: number): Buffer {
    const o = this.entriesOffset + i * this.stride;
    return this.data.subarray(o, o + this.keySize);
  }

  /** Position of the first key ≥ `key`. */
  private lowerBound(key: Buffer): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.keyAt(mid), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  find(key: Buffer): ContentInfo | undefined {
    if (this.count === 0 || key.length !== this.keySize) return undefined;
    const i = this.lowerBound(key);
    if (i >= this.count || !this.keyAt(i).equals(key)) return undefined;
    return this.entry(i);
  }

  /** Every entry whose key starts with the prefix byte (`m` for manifests), in key order. */
  *withPrefix(prefix: string): Generator<ContentInfo> {
    if (this.count === 0) return;
    const p = prefix.charCodeAt(0);
    for (let i = this.lowerBound(Buffer.from([p])); i < this.count && this.keyAt(i)[0] === p; i++) yield this.entry(i);
  }

  private entry(i: number): ContentInfo {
    const o = this.entriesOffset + i * this.stride;
    const id = contentIdOf(this.keyAt(i));
    const v = this.data.subarray(o + this.keySize, o + this.stride);
    return this.version === 1 ? this.v1Entry(id, v) : this.v2Entry(id, v);
  }

  private v1Entry(id: string, v: Buffer): ContentInfo {
    const nameLength = v[7]!;
    const nameOffset = v.readUInt32BE(8);
    const packed = v.readUInt32BE(16);
    return {
      id,
      timestampSeconds: v.readUIntBE(0, 6),
      formatVersion: v[6]!,
      packBlobId: this.name_(nameOffset, nameLength),
      deleted: (v[12]! & 0x80) !== 0,
      packOffset: v.readUInt32BE(12) & 0x7fffffff,
      packedLength: packed,
      // v1 stores no original length; contents there are uncompressed, so it is the packed length less the AEAD's 28.
      originalLength: Math.max(0, packed - 28),
      compressionHeaderId: 0,
      encryptionKeyId: 0,
    };
  }

  private v2Entry(id: string, v: Buffer): ContentInfo {
    const high = v.length > 18 ? v[18]! : 0;
    const formatIndex = v.length > 16 ? v[16]! : 0;
    const format = this.formats[formatIndex];
    if (!format) throw new RepositoryCorruptError(`index blob ${this.name}: entry for ${id} names format ${formatIndex}, which is not there`);
    let packIndex = v.readUInt16BE(14);
    if (v.length > 17) packIndex |= v[17]! << 16;
    return {
      id,
      timestampSeconds: v.readUInt32BE(0) + this.baseTimestamp,
      deleted: (v[4]! & 0x80) !== 0,
      packOffset: v.readUInt32BE(4) & 0x7fffffff,
      originalLength: v.readUIntBE(8, 3) | ((high >> 4) << 24),
      packedLength: v.readUIntBE(11, 3) | ((high & 0x0f) << 24),
      packBlobId: this.packName(packIndex),
      compressionHeaderId: format.compression,
      formatVersion: format.formatVersion,
      encryptionKeyId: format.encryptionKeyId,
    };
  }

  private packName(index: number): string {
    const cached = this.packNames.get(index);
    if (cached !== undefined) return cached;
    if (index >= this.packCount) throw new RepositoryCorruptError(`index blob ${this.name} names pack ${index} of ${this.packCount}`);
    const rec = this.packsOffset + index * 5;
    const name = this.name_(this.data.readUInt32BE(rec + 1), this.data[rec]!);
    this.packNames.set(index, name);
    return name;
  }

  private name_(offset: number, length: number): string {
    if (offset + length > this.data.length) throw new RepositoryCorruptError(`index blob ${this.name}: pack name out of range`);
    return this.data.toString('latin1', offset, offset + length);
  }
}

/** kopia's order of two entries of one content: the later one, a live one over a deleted one, the larger pack. */
export function laterEntry(a: ContentInfo, b: ContentInfo): ContentInfo {
  if (a.timestampSeconds !== b.timestampSeconds) return a.timestampSeconds > b.timestampSeconds ? a : b;
  if (a.deleted !== b.deleted) return a.deleted ? b : a;
  return a.packBlobId >= b.packBlobId ? a : b;
}

/** All index blobs of a repository, looked up together. */
export class MergedIndex {
  constructor(readonly blobs: readonly IndexBlob[]) {}

  /** The winning entry of a content (deleted ones included), or undefined when no index has it. */
  get(id: string): ContentInfo | undefined {
    const key = contentKey(id);
    let best: ContentInfo | undefined;
    for (const b of this.blobs) {
      const e = b.find(key);
      if (e) best = best ? laterEntry(best, e) : e;
    }
    return best;
  }

  /** The winning entry of every content with this prefix letter. */
  withPrefix(prefix: string): ContentInfo[] {
    const best = new Map<string, ContentInfo>();
    for (const b of this.blobs) {
      for (const e of b.withPrefix(prefix)) {
        const have = best.get(e.id);
        best.set(e.id, have ? laterEntry(have, e) : e);
      }
    }
    return [...best.values()];
  }
}
