/**
 * kopia's compressors, for reading. Compressed bytes start with a 4-byte big-endian header naming the compressor
 * (0x1000-0x1002 gzip, 0x1100-0x1103 zstd, 0x1200-0x1203 s2, 0x1300-0x1302 pgzip, 0x1400 lz4, 0x1500-0x1502
 * deflate); the levels of one family share a decoder. A content's compressor is in its index entry (index v2); an
 * object whose ID starts with `Z` was compressed before it was split into contents (index v1 repositories). Velero's
 * kopia stores file data uncompressed and directory listings and manifests with `zstd-fastest` (0x1101).
 */
import { gunzipSync, inflateRawSync, zstdDecompressSync } from 'node:zlib';
import { decodeLz4Frame } from './lz4.js';
import { decodeS2Stream } from './s2.js';

export class UnsupportedCompressionError extends Error {}

type Family = 'gzip' | 'zstd' | 's2' | 'pgzip' | 'lz4' | 'deflate';

const FAMILIES: Record<number, Family> = {
  0x1000: 'gzip', 0x1001: 'gzip', 0x1002: 'gzip',
  0x1100: 'zstd', 0x1101: 'zstd', 0x1102: 'zstd', 0x1103: 'zstd',
  0x1200: 's2', 0x1201: 's2', 0x1202: 's2', 0x1203: 's2',
  0x1300: 'pgzip', 0x1301: 'pgzip', 0x1302: 'pgzip',
  0x1400: 'lz4',
  0x1500: 'deflate', 0x1501: 'deflate', 0x1502: 'deflate',
};

function decode(family: Family, body: Buffer): Buffer {
  switch (family) {
    case 'gzip':
    case 'pgzip': // pgzip writes ordinary (multi-member) gzip
      return gunzipSync(body);
    case 'zstd':
      return zstdDecompressSync(body);
    case 's2':
      return decodeS2Stream(body);
    case 'lz4':
      return decodeLz4Frame(body);
    case 'deflate': // raw DEFLATE, no zlib header
      return inflateRawSync(body);
  }
}

/** Decompresses bytes that start with their compression header, checking it is `expected` when given. */
export function decompressWithHeader(data: Buffer, expected?: number): Buffer {
  if (data.length < 4) throw new UnsupportedCompressionError('compressed data shorter than its header');
  const header = data.readUInt32BE(0);
  if (expected !== undefined && header !== expected) {
    throw new UnsupportedCompressionError(`compression header 0x${header.toString(16)} does not match the index's 0x${expected.toString(16)}`);
  }
  const family = FAMILIES[header];
  if (!family) throw new UnsupportedCompressionError(`unknown kopia compressor 0x${header.toString(16)}`);
  return decode(family, data.subarray(4));
}
