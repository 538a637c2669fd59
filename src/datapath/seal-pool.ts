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
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createCipheriv, createHmac, randomFillSync } = require('node:crypto');
const { zstdCompressSync, constants } = require('node:zlib');
const encKey = Buffer.from(workerData.encKey);
const prefix = Buffer.from('cairn blob ');
const SLICE = 65536;
function sealInto(id, plain, out, start) {
  const key = createHmac('sha256', encKey).update(prefix).update(id).digest();
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
parentPort.on('message', (msg) => {
  const input = Buffer.from(msg.input);
  const output = Buffer.from(msg.output);
  const results = [];
  let at = 0;
  for (const job of msg.jobs) {
    const data = input.subarray(job.offset, job.offset + job.length);
    const id = Buffer.from(job.id);
    let payload = data;
    let flags = 0;
    if (job.compress) {
      const packed = zstdCompressSync(data, { pledgedSrcSize: data.length, params: { [constants.ZSTD_c_compressionLevel]: workerData.level, [constants.ZSTD_c_checksumFlag]: 0 } });
      if (packed.length < data.length * 0.97) { payload = packed; flags = 1; }
    }
    const length = sealInto(id, payload, output, at);
    results.push({ offset: at, length, flags });
    at += length;
  }
  parentPort.postMessage({ seq: msg.seq, input: msg.input, output: msg.output, results }, [msg.input, msg.output]);
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
}

/** Per-blob sealing overhead in the output slab (nonce + tag). */
const OVERHEAD = 28;

export class SealPool {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly freeInputs: ArrayBuffer[] = [];
  private readonly freeOutputs: ArrayBuffer[] = [];
  private seq = 0;
  private failure: unknown;
  readonly slabSize: number;
  private readonly outputSize: number;

  constructor(encKey: Buffer, size: number, options: { slabSize: number; maxJobsPerBatch: number; level?: number }) {
    this.slabSize = options.slabSize;
    this.outputSize = options.slabSize + options.maxJobsPerBatch * OVERHEAD + 64;
    for (let i = 0; i < size; i++) {
      // A small young generation makes the worker drop the temporary buffers of zstd and the cipher promptly.
      const w = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { encKey: Uint8Array.from(encKey), level: options.level ?? 3 },
        resourceLimits: { maxYoungGenerationSizeMb: 4 },
      });
      w.on('message', (msg: { seq: number; input: ArrayBuffer; output: ArrayBuffer; results: SealResult[] }) => {
        const p = this.pending.get(msg.seq);
        if (!p) return;
        this.pending.delete(msg.seq);
        this.busy[p.worker]!--;
        let released = false;
        p.resolve({
          results: msg.results,
          output: Buffer.from(msg.output),
          release: () => {
            if (released) return;
            released = true;
            // Only standard-size slabs are kept; one-offs for large chunks are left to the GC.
            if (msg.input.byteLength === this.slabSize) this.freeInputs.push(msg.input);
            if (msg.output.byteLength === this.outputSize) this.freeOutputs.push(msg.output);
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

  /** Seals the jobs whose plaintext is in `input` (from takeInput). The input slab is transferred. */
  run(input: Buffer, jobs: SealJob[]): Promise<SealBatchResult> {
    if (this.failure) return Promise.reject(this.failure as Error);
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    const seq = ++this.seq;
    this.busy[w]!++;
    const oversized = input.byteLength > this.slabSize;
    const output = oversized ? new ArrayBuffer(input.byteLength + this.outputSize - this.slabSize) : (this.freeOutputs.pop() ?? new ArrayBuffer(this.outputSize));
    const inputBuffer = input.buffer as ArrayBuffer;
    return new Promise<SealBatchResult>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w });
      this.workers[w]!.postMessage(
        { seq, input: inputBuffer, output, jobs: jobs.map((j) => ({ id: Uint8Array.from(j.id), offset: j.offset, length: j.length, compress: j.compress })) },
        [inputBuffer, output],
      );
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
