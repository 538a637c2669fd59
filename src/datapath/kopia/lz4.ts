/**
 * A decoder for the LZ4 frame format (kopia's deprecated `lz4` compressor writes frames with pierrec/lz4): magic
 * 0x184D2204, a frame descriptor (flags, block maximum, optional content size and dictionary ID, header checksum),
 * then blocks (a 32-bit size whose top bit marks a stored block, optional block checksum) up to a zero end mark and
 * an optional content checksum. Linked blocks may copy from earlier blocks, so blocks decode into one buffer.
 * Checksums are not checked: kopia authenticates every content before it gets here.
 */

export class Lz4FormatError extends Error {}

const MAGIC = 0x184d2204;

export function decodeLz4Frame(input: Buffer): Buffer {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < input.length) {
    if (pos + 7 > input.length) throw new Lz4FormatError('truncated frame header');
    const magic = input.readUInt32LE(pos);
    if (magic >= 0x184d2a50 && magic <= 0x184d2a5f) {
      pos += 8 + input.readUInt32LE(pos + 4); // a skippable frame
      continue;
    }
    if (magic !== MAGIC) throw new Lz4FormatError(`bad frame magic 0x${magic.toString(16)}`);
    const flags = input[pos + 4]!;
    if (flags >> 6 !== 1) throw new Lz4FormatError('unsupported frame version');
    const blockChecksum = (flags & 0x10) !== 0;
    const contentSize = (flags & 0x08) !== 0;
    const contentChecksum = (flags & 0x04) !== 0;
    const dictionary = (flags & 0x01) !== 0;
    pos += 6 + (contentSize ? 8 : 0) + (dictionary ? 4 : 0) + 1; // FLG, BD, fields, header checksum
    const frame: Buffer[] = [];
    let history = Buffer.alloc(0);
    for (;;) {
      if (pos + 4 > input.length) throw new Lz4FormatError('truncated block size');
      const word = input.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      const body = input.subarray(pos, pos + size);
      if (body.length !== size) throw new Lz4FormatError('truncated block');
      pos += size + (blockChecksum ? 4 : 0);
      const block = word & 0x80000000 ? Buffer.from(body) : decodeLz4Block(body, history);
      frame.push(block);
      // Keep the last 64 KiB for the next block's back-references.
      history = Buffer.concat([history, block]).subarray(-65536);
    }
    if (contentChecksum) pos += 4;
    out.push(...frame);
  }
  return Buffer.concat(out);
}

/** One LZ4 block; copies may reach into `history` (the end of the previous blocks). */
export function decodeLz4Block(src: Buffer, history: Buffer = Buffer.alloc(0)): Buffer {
  let buf = Buffer.allocUnsafe(Math.max(src.length * 4, 64));
  let d = 0;
  const ensure = (k: number) => {
    if (d + k <= buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, d + k));
    buf.copy(bigger, 0, 0, d);
    buf = bigger;
  };
  let s = 0;
  const extended = (base: number) => {
    let len = base;
    if (base === 15) {
      for (;;) {
        if (s >= src.length) throw new Lz4FormatError('truncated length');
        const b = src[s++]!;
        len += b;
        if (b !== 255) break;
      }
    }
    return len;
  };
  while (s < src.length) {
    const token = src[s++]!;
    const literals = extended(token >> 4);
    if (s + literals > src.length) throw new Lz4FormatError('literal out of range');
    ensure(literals);
    src.copy(buf, d, s, s + literals);
    d += literals;
    s += literals;
    if (s >= src.length) break; // the last sequence has literals only
    if (s + 2 > src.length) throw new Lz4FormatError('truncated offset');
    const offset = src.readUInt16LE(s);
    s += 2;
    const length = extended(token & 15) + 4;
    if (offset === 0 || offset > d + history.length) throw new Lz4FormatError('copy out of range');
    ensure(length);
    for (let i = 0; i < length; i++) {
      const from = d - offset;
      buf[d] = from >= 0 ? buf[from]! : history[history.length + from]!;
      d++;
    }
  }
  return buf.subarray(0, d);
}
