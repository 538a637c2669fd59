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
const { createDecipheriv, createHmac } = require('node:crypto');
const { zstdDecompressSync } = require('node:zlib');
const { Blake3Hasher } = require(workerData.blakePath);
const encKey = Buffer.from(workerData.encKey);
const idKey = Buffer.from(workerData.idKey);
const prefix = Buffer.from('cairn blob ');
function open(id, sealed, flags, rawLength) {
  const key = createHmac('sha256', encKey).update(prefix).update(id).digest();
  const d = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  d.setAAD(id);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  let plain;
  try {
    plain = Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
  } catch {
    return { error: 'failed authentication (wrong key, or the data was corrupted or tampered with)' };
  }
  if (flags & 1) {
    try {
      plain = zstdDecompressSync(plain, { maxOutputLength: Math.max(rawLength, 1) });
    } catch (err) {
      return { error: 'cannot be decompressed: ' + err.message };
    }
  }
  if (plain.length !== rawLength) return { error: 'does not match its ID' };
  const h = Blake3Hasher.newKeyed(idKey);
  h.update(plain);
  if (!h.digestBuffer().equals(id)) return { error: 'does not match its ID' };
  const out = new Uint8Array(new ArrayBuffer(plain.length));
  out.set(plain);
  return { plain: out };
}
parentPort.on('message', (msg) => {
  const r = open(Buffer.from(msg.id), Buffer.from(msg.sealed.buffer, msg.sealed.byteOffset, msg.sealed.byteLength), msg.flags, msg.rawLength);
  parentPort.postMessage({ seq: msg.seq, ...r }, r.plain ? [r.plain.buffer] : []);
});
`;

export class BlobOpenError extends Error {}

export class OpenPool {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, { resolve: (b: Buffer) => void; reject: (e: unknown) => void; worker: number }>();
  private seq = 0;

  constructor(keys: { encryption: Buffer; id: Buffer }, size: number) {
    const blakePath = blake3ModulePath();
    for (let i = 0; i < size; i++) {
      const w = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { encKey: Uint8Array.from(keys.encryption), idKey: Uint8Array.from(keys.id), blakePath },
        resourceLimits: { maxYoungGenerationSizeMb: 4 },
      });
      w.on('message', (msg: { seq: number; plain?: Uint8Array; error?: string }) => {
        const p = this.pending.get(msg.seq);
        if (!p) return;
        this.pending.delete(msg.seq);
        this.busy[p.worker]!--;
        if (msg.plain) p.resolve(Buffer.from(msg.plain.buffer, msg.plain.byteOffset, msg.plain.byteLength));
        else p.reject(new BlobOpenError(msg.error ?? 'failed'));
      });
      w.on('error', (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  /** Opens one sealed blob; `sealed` is transferred when it owns its whole ArrayBuffer, copied otherwise. */
  open(id: Buffer, sealed: Buffer, flags: number, rawLength: number): Promise<Buffer> {
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    this.busy[w]!++;
    const seq = ++this.seq;
    const owned = sealed.byteOffset === 0 && sealed.buffer.byteLength === sealed.length;
    const payload = owned ? sealed : Uint8Array.from(sealed);
    return new Promise<Buffer>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w });
      this.workers[w]!.postMessage({ seq, id: Uint8Array.from(id), sealed: payload, flags, rawLength }, [payload.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
