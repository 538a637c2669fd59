/**
 * An object store seen through a key prefix: the repository of one volume namespace lives under
 * `kopia/<namespace>/` of its location's store, and the data path expects its objects at the root.
 */
import type { Readable } from 'node:stream';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions, SignedUrlOptions } from '../../plugins/object-store/types.js';

export class PrefixedObjectStore implements ObjectStore {
  readonly description: string;
  readonly signedUrl?: (key: string, options: SignedUrlOptions) => Promise<string>;

  constructor(private readonly inner: ObjectStore, private readonly prefix: string) {
    if (prefix && !prefix.endsWith('/')) throw new Error(`prefix must end with "/": ${prefix}`);
    this.description = `${inner.description.replace(/\/$/, '')}/${prefix}`;
    if (inner.signedUrl) {
      const signed = inner.signedUrl.bind(inner);
      this.signedUrl = (key, options) => signed(this.prefix + key, options);
    }
  }

  get(key: string, options?: GetOptions): Promise<Buffer> {
    return this.inner.get(this.prefix + key, options);
  }
  getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable> {
    return this.inner.getStream(this.prefix + key, options);
  }
  put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    return this.inner.put(this.prefix + key, body, options);
  }
  async head(key: string): Promise<ObjectInfo | undefined> {
    const info = await this.inner.head(this.prefix + key);
    return info ? { ...info, key } : undefined;
  }
  async *list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ObjectInfo> {
    for await (const info of this.inner.list(this.prefix + prefix, options)) {
      yield { ...info, key: info.key.slice(this.prefix.length) };
    }
  }
  async listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]> {
    const found = await this.inner.listCommonPrefixes(this.prefix + prefix, delimiter);
    return found.map((p) => p.slice(this.prefix.length));
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(this.prefix + key);
  }
}
