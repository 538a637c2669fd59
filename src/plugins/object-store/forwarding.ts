/**
 * The base of a store that wraps another to change how some of its calls run (retried, limited, paced): every call
 * goes to the inner store as it is unless the subclass overrides it, and `signedUrl` exists only where the inner
 * store has it.
 */
import type { Readable } from 'node:stream';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions, SignedUrlOptions } from './types.js';

export abstract class ForwardingObjectStore implements ObjectStore {
  readonly description: string;
  signedUrl?: (key: string, options: SignedUrlOptions) => Promise<string | undefined>;

  protected constructor(protected readonly inner: ObjectStore) {
    this.description = inner.description;
    if (inner.signedUrl) this.signedUrl = (key, o) => inner.signedUrl!(key, o);
  }

  get(key: string, options?: GetOptions): Promise<Buffer> {
    return this.inner.get(key, options);
  }
  getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable> {
    return this.inner.getStream(key, options);
  }
  put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    return this.inner.put(key, body, options);
  }
  head(key: string): Promise<ObjectInfo | undefined> {
    return this.inner.head(key);
  }
  list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ObjectInfo> {
    return this.inner.list(prefix, options);
  }
  listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]> {
    return this.inner.listCommonPrefixes(prefix, delimiter);
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
}
