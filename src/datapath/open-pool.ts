/**
 * Worker threads that open blobs for restore and check: authenticate and decrypt (AES-256-GCM with the per-blob key),
 * decompress, and recompute the keyed BLAKE3 ID. The main thread only reads packs and writes files. Like seal-pool,
 * the worker is plain JavaScript from a string and implements docs/repository-format.md §3.1 as crypto.ts does; the
 * restore round-trip tests compare the results byte for byte.
 */
import { blake3ModulePath } from './blake3.js';
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createDecipheriv, createHmac, createSecretKey } = require('node:crypto');
const zlib = require('node:zlib');
const { Blake3Hasher } = require(workerData.blakePath);
// KeyObjects: Node 24 validates a Buffer key for ~10 µs per createHmac/createDecipheriv, a KeyObject for ~1 µs.
const encKey = createSecretKey(Buffer.from(workerData.encKey));
const hasher = Blake3Hasher.newKeyed(Buffer.from(workerData.idKey));
const prefix = Buffer.from('cairn blob ');
const SLICE = 65536;
// One zstd context for every blob, as compress.ts ZstdContext does (see there why and how).
let engine;
function zstdEngine() {
  if (engine === undefined || (engine && engine.destroyed)) {
    const e = zlib.createZstdDecompress();
    e.on('error', () => undefined);
    engine = e._handle && typeof e._handle.writeSync === 'function' && e._writeState instanceof Uint32Array ? e : null;
  }
  return engine;
}
// Decompresses frame into out; returns the plaintext length, or an error message.
function decompressInto(frame, out, rawLength) {
  const e = zstdEngine();
  if (!e || out.length <= rawLength) {
    const unpacked = zlib.zstdDecompressSync(frame, { maxOutputLength: Math.max(rawLength, 1) });
    if (unpacked.length > out.length) return 'does not match its ID';
    return unpacked.copy(out, 0);
  }
  // One spare byte: a frame holding more than rawLength bytes fills it and is caught by the length check.
  e._handle.writeSync(e._finishFlushFlag, frame, 0, frame.length, out, 0, rawLength + 1);
  if (e.destroyed) throw new Error('invalid zstd data');
  const availOut = e._writeState[0];
  const availIn = e._writeState[1];
  e._handle.reset();
  if (availIn !== 0) return 'does not match its ID';
  return rawLength + 1 - availOut;
}
let scratch = Buffer.allocUnsafe(1 << 20);
// Decrypts into out (a transferred buffer of the caller's), or into a scratch buffer first when compressed.
function open(id, sealed, flags, rawLength, out) {
  const key = createSecretKey(createHmac('sha256', encKey).update(prefix).update(id).digest());
  const d = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  d.setAAD(id);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  const body = sealed.subarray(12, sealed.length - 16);
  const compressed = (flags & 1) !== 0;
  if (compressed && scratch.length < body.length) scratch = Buffer.allocUnsafe(body.length);
  const dec = compressed ? scratch : out;
  if (body.length > dec.length) return { error: 'is larger than its index entry says' };
  let at = 0;
  try {
    for (let i = 0; i < body.length; i += SLICE) {
      const part = d.update(body.subarray(i, Math.min(body.length, i + SLICE)));
      part.copy(dec, at);
      at += part.length;
    }
    d.final();
  } catch {
    return { error: 'failed authentication (wrong key, or the data was corrupted or tampered with)' };
  }
  let plain = dec.subarray(0, at);
  if (compressed) {
    try {
      const n = decompressInto(plain, out, rawLength);
      if (typeof n === 'string') return { error: n };
      plain = out.subarray(0, n);
    } catch (err) {
      return { error: 'cannot be decompressed: ' + err.message };
    }
  }
  if (plain.length !== rawLength) return { error: 'does not match its ID' };
  hasher.reset();
  hasher.update(plain);
  if (!hasher.digestBuffer().equals(id)) return { error: 'does not match its ID' };
  return { length: plain.length };
}
parentPort.on('message', (msg) => {
  const sealed = Buffer.from(msg.sealed, 0, msg.sealedLength);
  const out = Buffer.from(msg.out);
  const r = open(Buffer.from(msg.id), sealed, msg.flags, msg.rawLength, out);
  parentPort.postMessage({ seq: msg.seq, sealed: msg.sealed, out: msg.out, ...r }, [msg.sealed, msg.out]);
});
`;

export class BlobOpenError extends Error {}

/** A blob's plaintext in a pooled buffer; call release() once it is written out. */
export interface BlobLease {
  data: Buffer;
  release(): void;
}

/**
 * Buffers for sealed input and plaintext output travel to the worker and back (transferred, not copied) and are
 * reused: memory stays flat however much is restored. Blobs larger than the slab get one-off buffers.
 */
export class OpenPool {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, { resolve: (b: BlobLease) => void; reject: (e: unknown) => void; worker: number }>();
  private readonly free: ArrayBuffer[] = [];
  private seq = 0;

  constructor(
    keys: { encryption: Buffer; id: Buffer },
    size: number,
    private readonly slabSize: number,
  ) {
    const blakePath = blake3ModulePath();
    for (let i = 0; i < size; i++) {
      const w = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { encKey: Uint8Array.from(keys.encryption), idKey: Uint8Array.from(keys.id), blakePath },
        resourceLimits: { maxYoungGenerationSizeMb: 4 },
      });
      w.on('message', (msg: { seq: number; sealed: ArrayBuffer; out: ArrayBuffer; length?: number; error?: string }) => {
        const p = this.pending.get(msg.seq);
        if (!p) return;
        this.pending.delete(msg.seq);
        this.busy[p.worker]!--;
        this.give(msg.sealed);
        if (msg.length === undefined) {
          this.give(msg.out);
          p.reject(new BlobOpenError(msg.error ?? 'failed'));
          return;
        }
        let released = false;
        p.resolve({
          data: Buffer.from(msg.out, 0, msg.length),
          release: () => {
            if (!released) this.give(msg.out);
            released = true;
          },
        });
      });
      w.on('error', (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  private give(buf: ArrayBuffer): void {
    if (buf.byteLength === this.slabSize && this.free.length < 16) this.free.push(buf);
  }

  /** A buffer of at least `size` bytes to read sealed bytes into (hand it to open()). */
  take(size: number): Buffer {
    if (size > this.slabSize) return Buffer.from(new ArrayBuffer(size));
    return Buffer.from(this.free.pop() ?? new ArrayBuffer(this.slabSize));
  }

  /** Opens a sealed blob held at the start of `buffer` (from take(); it is transferred). */
  open(id: Buffer, buffer: Buffer, sealedLength: number, flags: number, rawLength: number): Promise<BlobLease> {
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    this.busy[w]!++;
    const seq = ++this.seq;
    const out = this.take(rawLength).buffer as ArrayBuffer;
    const sealed = buffer.buffer as ArrayBuffer;
    return new Promise<BlobLease>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w });
      this.workers[w]!.postMessage({ seq, id: Uint8Array.from(id), sealed, sealedLength, out, flags, rawLength }, [sealed, out]);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
