/**
 * zstd compression from node:zlib, on the libuv thread pool so it runs beside the main thread, skipping data that
 * would not shrink: a byte-entropy estimate on a few samples spots random and already-compressed data for
 * almost nothing, and a result that saves less than 3 % is thrown away.
 */
import { zstdCompress, zstdDecompress, zstdDecompressSync, constants as zc } from 'node:zlib';

const LEVEL = 3;
const MIN_SIZE = 128;
const SAMPLE = 4096;
const ENTROPY_LIMIT = 7.5;
const KEEP_RATIO = 0.97;

const log2 = new Float64Array(SAMPLE * 4 + 1);
for (let i = 1; i < log2.length; i++) log2[i] = Math.log2(i);

/** Shannon entropy in bits per byte over up to 4 samples spread over the buffer. */
export function sampledEntropy(data: Uint8Array): number {
  const counts = new Uint32Array(256);
  let total = 0;
  const samples = data.length <= SAMPLE * 4 ? 1 : 4;
  const len = samples === 1 ? data.length : SAMPLE;
  for (let s = 0; s < samples; s++) {
    const from = samples === 1 ? 0 : Math.floor(((data.length - SAMPLE) * s) / (samples - 1));
    for (let i = from; i < from + len; i++) counts[data[i]!]!++;
    total += len;
  }
  let h = 0;
  const lt = Math.log2(total);
  for (let b = 0; b < 256; b++) {
    const c = counts[b]!;
    if (c) h -= c * (log2[c]! - lt);
  }
  return h / total;
}

export function worthCompressing(data: Uint8Array): boolean {
  return data.length >= MIN_SIZE && sampledEntropy(data) < ENTROPY_LIMIT;
}

/** The zstd frame, or undefined when compression does not pay. */
export function compress(data: Uint8Array): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) =>
    zstdCompress(data, { params: { [zc.ZSTD_c_compressionLevel]: LEVEL, [zc.ZSTD_c_checksumFlag]: 0 } }, (err, out) => {
      if (err) return reject(err);
      resolve(out.length < data.length * KEEP_RATIO ? out : undefined);
    }),
  );
}

/** Small blobs are decompressed in place: a thread-pool round trip costs more than the work. */
const SYNC_DECOMPRESS_MAX = 256 * 1024;

export function decompress(data: Uint8Array, rawLength: number): Promise<Buffer> {
  if (rawLength <= SYNC_DECOMPRESS_MAX) {
    try {
      return Promise.resolve(zstdDecompressSync(data, { maxOutputLength: Math.max(rawLength, 1) }));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  return new Promise((resolve, reject) =>
    zstdDecompress(data, { maxOutputLength: Math.max(rawLength, 1) }, (err, out) => (err ? reject(err) : resolve(out))),
  );
}
