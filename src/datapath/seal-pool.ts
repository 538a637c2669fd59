/**
 * Worker threads that compress and seal blobs, so zstd and AES-GCM run beside the main thread (which reads, chunks,
 * hashes, dedups and packs). Blobs travel in batches inside reusable slabs (one input and one output ArrayBuffer per
 * batch, transferred to the worker and back), so steady-state backup allocates almost nothing per blob and memory
 * stays flat. Pool size comes from the cgroup CPU limit (cpu.ts). The thread's side is seal-worker.ts.
 */
import type { Worker } from 'node:worker_threads';
import { META_STRIDE, type SealBatchMessage } from './seal-worker.js';
import { startWorker } from './worker-threads.js';


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
      const w = startWorker('seal-worker', { encKey: Uint8Array.from(encKey), level: options.level });
      w.on('message', (msg: SealBatchMessage) => {
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
      const msg: SealBatchMessage = { seq, count: jobs.length, input: inputBuffer, output, meta };
      this.workers[w]!.postMessage(msg, [inputBuffer, output, meta]);
    });
  }

  async close(): Promise<void> {
    // Nothing may wait forever on a worker that is gone.
    this.fail(new Error('seal workers closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
