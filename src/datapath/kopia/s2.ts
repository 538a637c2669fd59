/**
 * A decoder for S2 streams (klauspost/compress/s2, kopia's `s2-default`, `s2-better`, `s2-parallel-4/-8`): the
 * Snappy framing format (chunks of type, 24-bit length, body) whose compressed blocks may use S2's one addition to
 * the Snappy block format, the repeat copy (a 1-byte-offset copy with offset 0 reuses the previous offset, its
 * length in the following 0-3 bytes). Plain Snappy streams decode too. Chunk checksums (masked CRC-32C) are not
 * checked: kopia authenticates every content before it gets here.
 */

const STREAM_IDENTIFIER = 0xff;
const COMPRESSED = 0x00;
const UNCOMPRESSED = 0x01;
const CHECKSUM = 4;

export class S2FormatError extends Error {}

export function decodeS2Stream(input: Buffer): Buffer {
  const out: Buffer[] = [];
  let pos = 0;
  let seenIdentifier = false;
  while (pos < input.length) {
    if (pos + 4 > input.length) throw new S2FormatError('truncated chunk header');
    const type = input[pos]!;
    const length = input.readUIntLE(pos + 1, 3);
    const body = input.subarray(pos + 4, pos + 4 + length);
    if (body.length !== length) throw new S2FormatError('truncated chunk');
    pos += 4 + length;
    if (type === STREAM_IDENTIFIER) {
      const magic = body.toString('latin1');
      if (magic !== 'S2sTwO' && magic !== 'sNaPpY') throw new S2FormatError(`unknown stream identifier ${JSON.stringify(magic)}`);
      seenIdentifier = true;
      continue;
    }
    if (!seenIdentifier) throw new S2FormatError('stream does not start with an identifier chunk');
    if (type === COMPRESSED) out.push(decodeS2Block(body.subarray(CHECKSUM)));
    else if (type === UNCOMPRESSED) out.push(body.subarray(CHECKSUM));
    else if (type <= 0x7f) throw new S2FormatError(`unsupported chunk type 0x${type.toString(16)}`);
    // 0x80-0xfe: skippable (index, padding).
  }
  return Buffer.concat(out);
}

/** One S2 (or Snappy) block: a varint of the decoded length, then literals and copies. */
export function decodeS2Block(src: Buffer): Buffer {
  let s = 0;
  let n = 0;
  for (let shift = 0; ; shift += 7) {
    if (s >= src.length || shift > 28) throw new S2FormatError('bad block length');
    const b = src[s++]!;
    n += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  const dst = Buffer.allocUnsafe(n);
  let d = 0;
  let offset = 0;
  const need = (k: number) => {
    if (s + k > src.length) throw new S2FormatError('truncated block');
  };
  while (s < src.length) {
    const tag = src[s]!;
    let length: number;
    switch (tag & 3) {
      case 0: {
        let x = tag >> 2;
        if (x < 60) s += 1;
        else {
          const bytes = x - 59;
          need(1 + bytes);
          x = src.readUIntLE(s + 1, bytes);
          s += 1 + bytes;
        }
        length = x + 1;
        if (length > n - d || length > src.length - s) throw new S2FormatError('literal out of range');
        src.copy(dst, d, s, s + length);
        d += length;
        s += length;
        continue;
      }
      case 1: {
        need(2);
        length = (tag >> 2) & 7;
        const toffset = ((tag & 0xe0) << 3) | src[s + 1]!;
        s += 2;
        if (toffset === 0) {
          // S2's repeat: the previous offset again, with a longer length.
          if (length === 5) {
            need(1);
            length = src[s]! + 4;
            s += 1;
          } else if (length === 6) {
            need(2);
            length = src.readUInt16LE(s) + (1 << 8);
            s += 2;
          } else if (length === 7) {
            need(3);
            length = src.readUIntLE(s, 3) + (1 << 16);
            s += 3;
          }
        } else offset = toffset;
        length += 4;
        break;
      }
      case 2:
        need(3);
        length = 1 + (tag >> 2);
        offset = src.readUInt16LE(s + 1);
        s += 3;
        break;
      default:
        need(5);
        length = 1 + (tag >> 2);
        offset = src.readUInt32LE(s + 1);
        s += 5;
    }
    if (offset <= 0 || d < offset || length > n - d) throw new S2FormatError('copy out of range');
    if (offset >= length) dst.copy(dst, d, d - offset, d - offset + length);
    else for (let i = 0; i < length; i++) dst[d + i] = dst[d - offset + i]!;
    d += length;
  }
  if (d !== n) throw new S2FormatError(`block decoded to ${d} bytes, expected ${n}`);
  return dst;
}
