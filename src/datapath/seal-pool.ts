/**
 * Worker threads that compress and seal blobs, so zstd and AES-GCM run beside the main thread (which reads, chunks,
 * hashes, dedups and packs). Blobs travel in batches inside reusable slabs (one input and one output ArrayBuffer per
 * batch, transferred to the worker and back), so steady-state backup allocates almost nothing per blob and memory
 * stays flat. Pool size comes from the cgroup CPU limit (cpu.ts).
 *
 * The worker is plain JavaScript evaluated from a string (it runs the same in tests on TypeScript sources and in
 * the built CLI); it implements docs/repository-format.md §3.1 blob sealing exactly like crypto.ts sealBlobInto,
 * and the round-trip tests open worker-sealed blobs with crypto.ts, which keeps the two in step.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from './worker-threads.js';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createCipheriv, createHmac, createSecretKey, randomFillSync } = require('node:crypto');
const zlib = require('node:zlib');
// KeyObjects: Node 24 validates a Buffer key for ~10 µs per createHmac/createCipheriv, a KeyObject for ~1 µs.
const encKey = createSecretKey(Buffer.from(workerData.encKey));
const prefix = Buffer.from('cairn blob ');
const SLICE = 65536;
const ID = 32;
const params = { [zlib.constants.ZSTD_c_compressionLevel]: workerData.level, [zlib.constants.ZSTD_c_checksumFlag]: 0 };
// One zstd context for every blob, as compress.ts ZstdContext does (see there why and how).
let engine;
function zstdEngine() {
  if (engine === undefined || (engine && engine.destroyed)) {
    const e = zlib.createZstdCompress({ params });
    e.on('error', () => undefined);
    engine = e._handle && typeof e._handle.writeSync === 'function' && e._writeState instanceof Uint32Array ? e : null;
  }
  return engine;
}
let scratch = Buffer.allocUnsafe(1 << 20);
// The zstd frame of data in scratch when it is under limit bytes, else -1.
function compressToScratch(data, limit) {
  if (scratch.length < limit) scratch = Buffer.allocUnsafe(limit);
  const e = zstdEngine();
  if (!e) {
    const packed = zlib.zstdCompressSync(data, { pledgedSrcSize: data.length, params });
    return packed.length < limit ? packed.copy(scratch, 0) : -1;
  }
  e._handle.writeSync(e._finishFlushFlag, data, 0, data.length, scratch, 0, limit);
  if (e.destroyed) throw new Error('zstd compression failed');
  const availOut = e._writeState[0];
  const availIn = e._writeState[1];
  if (availOut !== 0 && availIn === 0) return limit - availOut;
  // Did not fit: the handle's reset() would also drop the level, so a fresh context next time.
  e.close();
  engine = undefined;
  return -1;
}
function sealInto(id, plain, out, start) {
  const key = createSecretKey(createHmac('sha256', encKey).update(prefix).update(id).digest());
  randomFillSync(out, start, 12);
  const c = createCipheriv('aes-256-gcm', key, out.subarray(start, start + 12));
  c.setAAD(id);
  let at = start + 12;
  for (let i = 0; i < plain.length; i += SLICE) {
    const part = c.update(plain.subarray(i, Math.min(plain.length, i + SLICE)));
    part.copy(out, at);
    at += part.length;
  }
  const fin = c.final();
  fin.copy(out, at);
  at += fin.length;
  c.getAuthTag().copy(out, at);
  return at + 16 - start;
}
// meta: per job 4 uint32 (offset, length, compress, -) then the 32-byte ID; results overwrite the uint32s.
// Node has no encrypt-into: every cipher update() returns a fresh buffer, which dies at once but is freed only when a
// GC runs, and this isolate's tiny heap rarely needs one, so a backup left ~50 MB of dead buffers in the workers at its
// peak. A minor GC every 4 MB sealed frees them (no measurable cost: user-space instructions unchanged); a full GC
// did as well but cost ~8 % more instructions. (--expose-gc set at run time exposes gc to new contexts only, hence vm.)
require('node:v8').setFlagsFromString('--expose-gc');
const collectGarbage = require('node:vm').runInNewContext('gc');
const GC_EVERY = 4 << 20;
let sinceGc = 0;
parentPort.on('message', (msg) => {
  const input = Buffer.from(msg.input);
  const output = Buffer.from(msg.output);
  const meta = Buffer.from(msg.meta);
  const words = new Uint32Array(msg.meta);
  const stride = (16 + ID) / 4;
  let at = 0;
  for (let j = 0; j < msg.count; j++) {
    const w = j * stride;
    const data = input.subarray(words[w], words[w] + words[w + 1]);
    const id = meta.subarray(w * 4 + 16, w * 4 + 16 + ID);
    let payload = data;
    let flags = 0;
    if (words[w + 2]) {
      // Kept only when it saves at least 3 %.
      const n = compressToScratch(data, Math.floor(data.length * 0.97));
      if (n >= 0) { payload = scratch.subarray(0, n); flags = 1; }
    }
    const length = sealInto(id, payload, output, at);
    words[w] = at;
    words[w + 1] = length;
    words[w + 2] = flags;
    at += length;
  }
  parentPort.postMessage({ seq: msg.seq, input: msg.input, output: msg.output, meta: msg.meta }, [msg.input, msg.output, msg.meta]);
  sinceGc += at;
  if (sinceGc > GC_EVERY) { sinceGc = 0; collectGarbage({ type: 'minor' }); }
});
`;

export interface SealJob {
  id: Buffer;
  /** Where the blob's plaintext is in the batch's input slab. */
  offset: number;
  length: number;
  compress: boolean;
}

export interface SealResult {
  /** Where the sealed blob is in the returned output slab. */
  offset: number;
  length: number;
  /** 1 (FLAG_ZSTD) when compressed. */
  flags: number;
}

export interface SealBatchResult {
  results: SealResult[];
  output: Buffer;
  /** Gives the slabs back for reuse; call once the sealed bytes are copied out. */
  release(): void;
}

interface Pending {
  resolve: (r: SealBatchResult) => void;
  reject: (e: unknown) => void;
  worker: number;
  count: number;
}

/** Per-blob sealing overhead in the output slab (nonce + tag). */
const OVERHEAD = 28;
/** Bytes per job in the meta buffer: offset, length, compress flag, spare (uint32 each), then the 32-byte ID. */
const META_STRIDE = 16 + 32;

export class SealPool {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly freeInputs: ArrayBuffer[] = [];
  private readonly freeOutputs: ArrayBuffer[] = [];
  private readonly freeMeta: ArrayBuffer[] = [];
  private seq = 0;
  private failure: unknown;
  readonly slabSize: number;
  private readonly outputSize: number;
  private readonly metaSize: number;

  constructor(encKey: Buffer, size: number, options: { slabSize: number; maxJobsPerBatch: number; level: number }) {
    this.slabSize = options.slabSize;
    this.outputSize = options.slabSize + options.maxJobsPerBatch * OVERHEAD + 64;
    this.metaSize = options.maxJobsPerBatch * META_STRIDE;
    for (let i = 0; i < size; i++) {
      const w = startWorker(WORKER_SOURCE, { encKey: Uint8Array.from(encKey), level: options.level });
      w.on('message', (msg: { seq: number; input: ArrayBuffer; output: ArrayBuffer; meta: ArrayBuffer }) => {
        const p = this.pending.get(msg.seq);
        if (!p) return;
        this.pending.delete(msg.seq);
        this.busy[p.worker]!--;
        const words = new Uint32Array(msg.meta);
        const results: SealResult[] = new Array<SealResult>(p.count);
        for (let j = 0; j < p.count; j++) {
          const k = (j * META_STRIDE) / 4;
          results[j] = { offset: words[k]!, length: words[k + 1]!, flags: words[k + 2]! };
        }
        if (msg.meta.byteLength === this.metaSize) this.freeMeta.push(msg.meta);
        let released = false;
        p.resolve({
          results,
          output: Buffer.from(msg.output),
          release: () => {
            if (released) return;
            released = true;
            // Only standard-size slabs are kept; one-offs for large chunks (a few MiB each) are freed now rather than
            // at a GC, which with external memory weighed in V8's global limit (heap-tuning.ts) comes late.
            if (msg.input.byteLength === this.slabSize) this.freeInputs.push(msg.input);
            else msg.input.transfer(0);
            if (msg.output.byteLength === this.outputSize) this.freeOutputs.push(msg.output);
            else msg.output.transfer(0);
          },
        });
      });
      w.on('error', (err) => this.fail(err));
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  private fail(err: unknown): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** An input slab to fill with plaintext (reused when one is free); `atLeast` above the slab size gets a one-off. */
  takeInput(atLeast = 0): Buffer {
    if (atLeast > this.slabSize) return Buffer.from(new ArrayBuffer(atLeast));
    return Buffer.from(this.freeInputs.pop() ?? new ArrayBuffer(this.slabSize));
  }

  /** Takes back an input slab that was not sent to a worker. */
  giveInput(input: Buffer): void {
    if (input.buffer.byteLength === this.slabSize) this.freeInputs.push(input.buffer as ArrayBuffer);
  }

  /** Seals the jobs whose plaintext is in `input` (from takeInput). The input slab is transferred. */
  run(input: Buffer, jobs: SealJob[]): Promise<SealBatchResult> {
    if (this.failure) return Promise.reject(this.failure as Error);
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    const seq = ++this.seq;
    this.busy[w]!++;
    const oversized = input.byteLength > this.slabSize;
    const output = oversized ? new ArrayBuffer(input.byteLength + this.outputSize - this.slabSize) : (this.freeOutputs.pop() ?? new ArrayBuffer(this.outputSize));
    const metaSize = Math.max(this.metaSize, jobs.length * META_STRIDE);
    const meta = (metaSize === this.metaSize ? this.freeMeta.pop() : undefined) ?? new ArrayBuffer(metaSize);
    const words = new Uint32Array(meta);
    const bytes = new Uint8Array(meta);
    for (let j = 0; j < jobs.length; j++) {
      const job = jobs[j]!;
      const k = j * META_STRIDE;
      words[k / 4] = job.offset;
      words[k / 4 + 1] = job.length;
      words[k / 4 + 2] = job.compress ? 1 : 0;
      bytes.set(job.id, k + 16);
    }
    const inputBuffer = input.buffer as ArrayBuffer;
    return new Promise<SealBatchResult>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w, count: jobs.length });
      this.workers[w]!.postMessage({ seq, count: jobs.length, input: inputBuffer, output, meta }, [inputBuffer, output, meta]);
    });
  }

  async close(): Promise<void> {
    // Nothing may wait forever on a worker that is gone.
    this.fail(new Error('seal workers closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
