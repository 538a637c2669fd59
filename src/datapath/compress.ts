/**
 * zstd compression from node:zlib, on the libuv thread pool so it runs beside the main thread, skipping data that
 * would not shrink: a byte-entropy estimate on a few samples spots random and already-compressed data for
 * almost nothing, and a result that saves less than 3 % is thrown away.
 *
 * ZstdContext is the one place in cairn that uses a Node internal (see there why, and its fallback);
 * test/unit/datapath/compress.test.ts fails loudly when a Node upgrade takes it away.
 */
import { createZstdCompress, createZstdDecompress, zstdCompress, zstdCompressSync, zstdDecompress, zstdDecompressSync, constants as zc } from 'node:zlib';
import { FLAG_ZSTD } from './pack.js';

const MIN_SIZE = 128;
const SAMPLE = 4096;
const ENTROPY_LIMIT = 7.5;
const KEEP_RATIO = 0.97;

/** The largest zstd frame worth keeping for `length` bytes of data: it must save at least 3 %. */
export function compressionLimit(length: number): number {
  return Math.floor(length * KEEP_RATIO);
}

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
 * there (another Node version) the one-shot functions are used, which cost 40-100 µs more per frame (a context and
 * its tables built and freed each time): 20,000 small files would pay about a second of CPU. The seal and open
 * workers (seal-worker.ts, open-worker.ts) use this class too.
 */
export class ZstdContext {
  /** undefined: none yet; null: this Node has no usable handle (one-shot functions). */
  private engine: ZlibInternals | null | undefined;
  /** Decompression: the plaintext length the current frame must have. */
  private expect = -1;

  /**
   * `level` is the compression level (compress mode only; 0 is zstd's default, 3). `reuse: false` takes the one-shot
   * functions even where the handle is there (the tests run both paths).
   */
  constructor(
    private readonly mode: 'compress' | 'decompress',
    private readonly level = 0,
    options: { reuse?: boolean } = {},
  ) {
    if (options.reuse === false) this.engine = null;
  }

  /** Whether frames go through the reused context (true on the Node versions cairn is tested on). */
  get reusesContext(): boolean {
    return this.handle() !== null;
  }

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
    // One spare byte: a frame with more than rawLength bytes fills the buffer and is caught.
    const out = Buffer.allocUnsafe(rawLength + 1);
    return out.subarray(0, this.decompressInto(frame, out, rawLength));
  }

  /**
   * Decompresses one frame that must hold exactly rawLength bytes into `out`; returns rawLength, or throws when the
   * frame holds more or less or is not valid zstd. With room for rawLength + 1 bytes in `out` (the spare byte catches
   * a frame that holds more) nothing is allocated.
   */
  decompressInto(frame: Uint8Array, out: Buffer, rawLength: number): number {
    if (out.length < rawLength) throw new RangeError(`decompressInto needs room for ${rawLength} bytes, got ${out.length}`);
    // No room for the spare byte (a buffer of exactly rawLength): through one that has it.
    if (out.length === rawLength) return this.decompress(frame, rawLength).copy(out, 0);
    const e = this.handle();
    let n: number;
    if (e) {
      this.expect = rawLength;
      n = this.run(frame, out, rawLength + 1, e);
    } else {
      let unpacked: Buffer;
      try {
        unpacked = zstdDecompressSync(frame, { maxOutputLength: rawLength + 1 });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new Error(FRAME_TOO_LARGE, { cause: err });
        throw err;
      }
      n = unpacked.length > rawLength ? -1 : unpacked.copy(out, 0);
    }
    if (n < 0 || n > rawLength) throw new Error(FRAME_TOO_LARGE);
    if (n !== rawLength) throw new Error('zstd frame is shorter than its index entry says');
    return n;
  }
}

const FRAME_TOO_LARGE = 'zstd frame is larger than its index entry says';

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

/**
 * What a blob is sealed as: its zstd frame when compression was asked for and saves at least 3 %, else the data
 * itself. One per thread (the seal workers and the backup's own thread each keep one): the zstd context and the
 * scratch buffer the frame is written into are reused across blobs.
 */
export class BlobCompressor {
  private readonly zstd: ZstdContext;
  private scratch = Buffer.allocUnsafe(1 << 20);

  constructor(level: number) {
    this.zstd = new ZstdContext('compress', level);
  }

  /** The bytes to seal and their flags (FLAG_ZSTD when compressed); a frame stays valid until the next call. */
  payload(data: Uint8Array, compress: boolean): { bytes: Uint8Array; flags: number } {
    if (!compress) return { bytes: data, flags: 0 };
    const limit = compressionLimit(data.length);
    if (this.scratch.length < limit) this.scratch = Buffer.allocUnsafe(Math.max(limit, 1 << 20));
    const n = this.zstd.compressInto(data, this.scratch, limit);
    return n >= 0 ? { bytes: this.scratch.subarray(0, n), flags: FLAG_ZSTD } : { bytes: data, flags: 0 };
  }
}
