/**
 * The seal worker thread (started by seal-pool.ts through worker-threads.ts): compresses and seals the blobs of a
 * batch with the same code the backup's own thread uses (BlobCompressor, sealBlobInto), so there is one
 * implementation of docs/repository-format.md §3.1 blob sealing.
 */
import type { MessagePort } from 'node:worker_threads';
import { BlobCompressor } from './compress.js';
import { ID_BYTES, sealBlobInto } from './crypto.js';
import { collectYoungGarbage } from './heap-tuning.js';

export interface SealWorkerData {
  encKey: Uint8Array;
  /** zstd level from the repository config. */
  level: number;
}

/**
 * One batch: the plaintexts in `input`, per job META_STRIDE bytes of `meta` (offset, length, compress flag, spare,
 * as uint32, then the 32-byte ID). The worker writes the sealed blobs into `output` back to back and overwrites
 * each job's offset, length and flags in `meta` with where its sealed blob is; all three buffers travel back.
 */
export interface SealBatchMessage {
  seq: number;
  count: number;
  input: ArrayBuffer;
  output: ArrayBuffer;
  meta: ArrayBuffer;
}

/** Bytes per job in the meta buffer: offset, length, compress flag, spare (uint32 each), then the 32-byte ID. */
export const META_STRIDE = 16 + ID_BYTES;

/**
 * Node has no encrypt-into: every cipher update() returns a fresh buffer, which dies at once but is freed only when a
 * GC runs, and a worker's tiny heap rarely needs one, so a backup left ~50 MB of dead buffers in the workers at its
 * peak. A minor GC every 4 MB sealed frees them (no measurable cost: user-space instructions unchanged); a full GC
 * did as well but cost ~8 % more instructions.
 */
const GC_EVERY = 4 << 20;

export function main(data: SealWorkerData, port: MessagePort): (msg: SealBatchMessage) => void {
  const keys = { encryption: Buffer.from(data.encKey) };
  const compressor = new BlobCompressor(data.level);
  let sinceGc = 0;
  return (msg) => {
    const input = Buffer.from(msg.input);
    const output = Buffer.from(msg.output);
    const meta = Buffer.from(msg.meta);
    const words = new Uint32Array(msg.meta);
    const stride = META_STRIDE / 4;
    let at = 0;
    for (let j = 0; j < msg.count; j++) {
      const w = j * stride;
      const id = meta.subarray(w * 4 + 16, w * 4 + 16 + ID_BYTES);
      const { bytes, flags } = compressor.payload(input.subarray(words[w], words[w]! + words[w + 1]!), words[w + 2] !== 0);
      const length = sealBlobInto(keys, id, bytes, output, at);
      words[w] = at;
      words[w + 1] = length;
      words[w + 2] = flags;
      at += length;
    }
    port.postMessage({ seq: msg.seq, input: msg.input, output: msg.output, meta: msg.meta }, [msg.input, msg.output, msg.meta]);
    sinceGc += at;
    if (sinceGc > GC_EVERY) {
      sinceGc = 0;
      collectYoungGarbage();
    }
  };
}
