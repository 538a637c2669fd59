/** Caps how many requests run at once against a store (connections, file descriptors, server load). */
import type { Readable } from 'node:stream';
import { ForwardingObjectStore } from './forwarding.js';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions } from './types.js';

export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}

  async acquire(): Promise<void> {
    if (this.active < this.max) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  async run<T>(op: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await op();
    } finally {
      this.release();
    }
  }
}

/** Each call but `list` (passed through as it is) waits for a free slot. */
export class ConcurrencyLimitedObjectStore extends ForwardingObjectStore {
  private readonly sem: Semaphore;

  constructor(inner: ObjectStore, maxConcurrent: number) {
    super(inner);
    this.sem = new Semaphore(maxConcurrent);
  }

  override get(key: string, options?: GetOptions): Promise<Buffer> {
    return this.sem.run(() => this.inner.get(key, options));
  }
  override getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable> {
    return this.sem.run(() => this.inner.getStream(key, options));
  }
  override put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    return this.sem.run(() => this.inner.put(key, body, options));
  }
  override head(key: string): Promise<ObjectInfo | undefined> {
    return this.sem.run(() => this.inner.head(key));
  }
  override listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]> {
    return this.sem.run(() => this.inner.listCommonPrefixes(prefix, delimiter));
  }
  override delete(key: string): Promise<void> {
    return this.sem.run(() => this.inner.delete(key));
  }
}
