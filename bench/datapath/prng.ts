// Deterministic byte and number sources for the benchmark datasets: the same recipe yields the same bytes on
// every run, so a dataset on disk can be reused and a modified file can be put back exactly.
import { createCipheriv, createHash } from 'node:crypto';

/** The 32-bit LCG of the dataset recipe (docs/benchmarks.md, Datasets): seed = seed * 1103515245 + 12345 mod 2^32. */
export class Lcg {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (Math.imul(this.state, 1103515245) + 12345) >>> 0;
    return this.state;
  }
}

/**
 * Incompressible bytes from a name: AES-256-CTR keystream keyed by SHA-256(name). Stands in for /dev/urandom so the
 * large files are random to every compressor yet identical on every generation.
 */
export class KeyStream {
  private readonly cipher;

  constructor(name: string) {
    const key = createHash('sha256').update(`cairn-bench:${name}`).digest();
    this.cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  }

  /** The next `length` bytes of the stream. */
  take(length: number): Buffer {
    return this.cipher.update(Buffer.alloc(length));
  }
}
