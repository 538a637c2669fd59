/**
 * zstd compression from node:zlib, on the libuv thread pool so it runs beside the main thread, skipping data that
 * would not shrink: a byte-entropy estimate on a few samples spots random and already-compressed data for
 * almost nothing, and a result that saves less than 3 % is thrown away.
 */
import { createZstdCompress, createZstdDecompress, zstdCompress, zstdCompressSync, zstdDecompress, zstdDecompressSync, constants as zc } from 'node:zlib';

const MIN_SIZE = 128;
const SAMPLE = 4096;
const ENTROPY_LIMIT = 7.5;
const KEEP_RATIO = 0.97;

const log2 = new Float64Array(SAMPLE * 4 + 1);
for (let i = 1; i < log2.length; i++) log2[i] = Math.log2(i);

const counts = new Uint32Array(256);

/**
 * Shannon entropy in bits per byte over up to 4 samples spread over the buffer: 4 x 4 KiB for chunks of 64 KiB and
 * more, 4 x 1 KiB for smaller data (counting every byte of a small file cost as much as reading it), the whole of
 * data up to 4 KiB.
 */
export function sampledEntropy(data: Uint8Array): number {
  counts.fill(0);
  let total = 0;
  const samples = data.length <= SAMPLE ? 1 : 4;
  const len = samples === 1 ? data.length : data.length < 16 * SAMPLE ? SAMPLE / 4 : SAMPLE;
  for (let s = 0; s < samples; s++) {
    const from = samples === 1 ? 0 : Math.floor(((data.length - len) * s) / (samples - 1));
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

/** zstd parameters for a compression level: no frame checksum (every blob is authenticated anyway). */
function zstdParams(level: number): Record<number, number> {
  return { [zc.ZSTD_c_compressionLevel]: level, [zc.ZSTD_c_checksumFlag]: 0 };
}

/** The zstd frame, or undefined when compression does not pay. */
export function compress(data: Uint8Array, level: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) =>
    zstdCompress(data, { params: zstdParams(level) }, (err, out) => {
      if (err) return reject(err);
      resolve(out.length < data.length * KEEP_RATIO ? out : undefined);
    }),
  );
}

/** What node:zlib keeps under a stream object: its native handle and the two counters writeSync leaves behind. */
interface ZlibInternals {
  _handle?: { writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void; reset(): void };
  _writeState?: Uint32Array;
  _finishFlushFlag: number;
  destroyed: boolean;
  close(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * One zstd context reused for many small frames. zstdCompressSync/zstdDecompressSync build and free a context per
 * call, which costs as much as compressing or decompressing a small file; here the context of one zlib stream
 * object is driven synchronously through its native handle (each frame written straight into the caller's
 * buffer), the way zlib's own sync functions drive it once. Node does not document that handle: when it is not
 * there (another Node version) the one-shot functions are used. seal-pool.ts and open-pool.ts carry the same logic
 * in their worker sources.
 */
export class ZstdContext {
  /** undefined: none yet; null: this Node has no usable handle (one-shot functions). */
  private engine: ZlibInternals | null | undefined;
  /** Decompression: the plaintext length the current frame must have. */
  private expect = -1;

  /** `level` is the compression level (compress mode only; 0 is zstd's default, 3). */
  constructor(
    private readonly mode: 'compress' | 'decompress',
    private readonly level = 0,
  ) {}

  private handle(): ZlibInternals | null {
    if (this.engine === null) return null;
    if (this.engine && !this.engine.destroyed) return this.engine;
    const e = (this.mode === 'compress' ? createZstdCompress({ params: zstdParams(this.level) }) : createZstdDecompress()) as unknown as ZlibInternals;
    // An error destroys the stream (checked below through `destroyed`) and is also emitted later: keep it quiet.
    e.on('error', () => undefined);
    this.engine = typeof e._handle?.writeSync === 'function' && e._writeState instanceof Uint32Array ? e : null;
    return this.engine;
  }

  private drop(e: ZlibInternals): void {
    this.engine = undefined;
    if (!e.destroyed) e.close();
  }

  /** Runs one frame through the context into out[0, outLength); returns the bytes written or -1 when out is full. */
  private run(input: Uint8Array, out: Uint8Array, outLength: number, e: ZlibInternals): number {
    e._handle!.writeSync(e._finishFlushFlag, input, 0, input.length, out, 0, outLength);
    if (e.destroyed) {
      this.drop(e);
      throw new Error(this.mode === 'compress' ? 'zstd compression failed' : 'invalid zstd data');
    }
    const availOut = e._writeState![0]!;
    const availIn = e._writeState![1]!;
    const complete = availOut !== 0 && availIn === 0;
    if (this.mode === 'decompress') {
      // After a whole frame the context is ready for the next one; after anything else, a clean session so that an
      // unfinished frame cannot leak into the next (decompression has no parameters to lose).
      if (!complete || outLength - availOut !== this.expect) e._handle!.reset();
    } else if (!complete) {
      // The handle's reset() also drops the parameters (level): a fresh context instead. After a complete frame the
      // context is ready for the next one as it is.
      this.drop(e);
    }
    return complete ? outLength - availOut : -1;
  }

  /** The zstd frame of data (in `out`, which must hold `limit` bytes) when it is shorter than limit, else -1. */
  compressInto(data: Uint8Array, out: Buffer, limit: number): number {
    const e = this.handle();
    if (!e) {
      const packed = zstdCompressSync(data, { pledgedSrcSize: data.length, params: zstdParams(this.level) });
      return packed.length < limit ? packed.copy(out, 0) : -1;
    }
    return this.run(data, out, limit, e);
  }

  /** Decompresses one frame that must hold exactly rawLength bytes; throws when it does not. */
  decompress(frame: Uint8Array, rawLength: number): Buffer {
    const e = this.handle();
    if (!e) return zstdDecompressSync(frame, { maxOutputLength: Math.max(rawLength, 1) });
    // One spare byte: a frame with more than rawLength bytes fills the buffer and is caught.
    const out = Buffer.allocUnsafe(rawLength + 1);
    this.expect = rawLength;
    const n = this.run(frame, out, out.length, e);
    if (n < 0) throw new Error('zstd frame is larger than its index entry says');
    if (n !== rawLength) throw new Error('zstd frame is shorter than its index entry says');
    return out.subarray(0, n);
  }
}

let decompressor: ZstdContext | undefined;

/** Small blobs are decompressed in place: a thread-pool round trip costs more than the work. */
const SYNC_DECOMPRESS_MAX = 256 * 1024;

export function decompress(data: Uint8Array, rawLength: number): Promise<Buffer> {
  if (rawLength <= SYNC_DECOMPRESS_MAX) {
    try {
      return Promise.resolve((decompressor ??= new ZstdContext('decompress')).decompress(data, rawLength));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  return new Promise((resolve, reject) =>
    zstdDecompress(data, { maxOutputLength: Math.max(rawLength, 1) }, (err, out) => (err ? reject(err) : resolve(out))),
  );
}
