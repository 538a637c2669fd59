/** Caps how many requests run at once against a store (connections, file descriptors, server load). */
import type { Readable } from 'node:stream';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions, SignedUrlOptions } from './types.js';

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

export class ConcurrencyLimitedObjectStore implements ObjectStore {
  readonly description: string;
  private readonly sem: Semaphore;
  signedUrl?: (key: string, options: SignedUrlOptions) => Promise<string | undefined>;

  constructor(
    private readonly inner: ObjectStore,
    maxConcurrent: number,
  ) {
    this.description = inner.description;
    this.sem = new Semaphore(maxConcurrent);
    if (inner.signedUrl) this.signedUrl = (key, o) => inner.signedUrl!(key, o);
  }

  get(key: string, options?: GetOptions): Promise<Buffer> {
    return this.sem.run(() => this.inner.get(key, options));
  }
  getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable> {
    return this.sem.run(() => this.inner.getStream(key, options));
  }
  put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    return this.sem.run(() => this.inner.put(key, body, options));
  }
  head(key: string): Promise<ObjectInfo | undefined> {
    return this.sem.run(() => this.inner.head(key));
  }
  list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ObjectInfo> {
    return this.inner.list(prefix, options);
  }
  listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]> {
    return this.sem.run(() => this.inner.listCommonPrefixes(prefix, delimiter));
  }
  delete(key: string): Promise<void> {
    return this.sem.run(() => this.inner.delete(key));
  }
}
