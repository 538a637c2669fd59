/**
 * An ObjectStore plugin as cairn's object-store interface. Velero's ObjectStore service addresses objects by bucket
 * and full key and knows nothing of sizes or ranges, so: keys are put under the location's prefix here; a ranged
 * read streams the object and keeps the range; `head` can say whether an object exists but not its size (-1) or
 * time; `list` gives keys only. Uploads stream in 1 MiB messages (Velero's client sends 16 KiB; the plugin side
 * takes any size). Init's config is Velero's: the location's config plus `bucket`, `prefix`, `caCert` and
 * `credentialsFile`, and is given again to a restarted process.
 */
import { Readable } from 'node:stream';
import { ObjectNotFoundError } from '../object-store/errors.js';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions, SignedUrlOptions } from '../object-store/types.js';
import { PluginCallError } from './errors.js';
import type { PluginIdentifier } from './kinds.js';
import type { BytesMessage, CreateSignedURLResponse, Empty, ListCommonPrefixesResponse, ListObjectsResponse, ObjectExistsResponse } from './messages.js';
import { clientStream, serverStream, unary } from './rpc.js';
import type { PluginSession } from './session.js';

/** Bytes per PutObject message. */
export const PUT_CHUNK_BYTES = 1024 * 1024;

/** The ObjectStore service of one plugin, as Velero's client calls it. */
export class ObjectStorePluginClient {
  constructor(
    private readonly session: PluginSession,
    readonly id: PluginIdentifier,
  ) {}

  private target() {
    return this.session.target(this.id, 'ObjectStore');
  }

  /** Init, remembered for a restarted process. */
  async init(config: Readonly<Record<string, string>>): Promise<void> {
    const request = { plugin: this.id.name, config: { ...config } };
    await unary<Empty>(await this.target(), 'Init', request);
    this.session.process(this.id.command).addReinitializer(`ObjectStore/${this.id.name}`, (proc) =>
      unary<Empty>({ proc, service: 'ObjectStore', plugin: this.id.name, timeoutMs: this.session.callTimeoutMs }, 'Init', request).then(() => undefined),
    );
  }

  async putObject(bucket: string, key: string, body: Buffer | Readable): Promise<void> {
    const plugin = this.id.name;
    async function* messages(): AsyncGenerator<object> {
      let sent = false;
      for await (const chunk of chunks(body)) {
        yield { plugin, bucket, key, body: chunk };
        sent = true;
      }
      // An empty object is still one message: the plugin learns bucket and key from the first.
      if (!sent) yield { plugin, bucket, key, body: Buffer.alloc(0) };
    }
    await clientStream<Empty>(await this.target(), 'PutObject', messages());
  }

  async objectExists(bucket: string, key: string): Promise<boolean> {
    return (await unary<ObjectExistsResponse>(await this.target(), 'ObjectExists', { plugin: this.id.name, bucket, key })).exists;
  }

  async *getObject(bucket: string, key: string): AsyncGenerator<Buffer> {
    for await (const msg of serverStream<BytesMessage>(await this.target(), 'GetObject', { plugin: this.id.name, bucket, key })) yield msg.data;
  }

  async listCommonPrefixes(bucket: string, prefix: string, delimiter: string): Promise<string[]> {
    return (await unary<ListCommonPrefixesResponse>(await this.target(), 'ListCommonPrefixes', { plugin: this.id.name, bucket, prefix, delimiter })).prefixes;
  }

  async listObjects(bucket: string, prefix: string): Promise<string[]> {
    return (await unary<ListObjectsResponse>(await this.target(), 'ListObjects', { plugin: this.id.name, bucket, prefix })).keys;
  }

  async deleteObject(bucket: string, key: string): Promise<void> {
    await unary<Empty>(await this.target(), 'DeleteObject', { plugin: this.id.name, bucket, key });
  }

  /** `ttl` goes over the wire as Go's time.Duration: nanoseconds. */
  async createSignedURL(bucket: string, key: string, ttlMs: number): Promise<string> {
    return (await unary<CreateSignedURLResponse>(await this.target(), 'CreateSignedURL', { plugin: this.id.name, bucket, key, ttl: String(BigInt(ttlMs) * 1_000_000n) })).url;
  }
}

async function* chunks(body: Buffer | Readable): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(body)) {
    for (let at = 0; at < body.length; at += PUT_CHUNK_BYTES) yield body.subarray(at, at + PUT_CHUNK_BYTES);
    return;
  }
  let pending: Buffer[] = [];
  let size = 0;
  for await (const piece of body as AsyncIterable<Buffer | string>) {
    const buf = typeof piece === 'string' ? Buffer.from(piece) : piece;
    pending.push(buf);
    size += buf.length;
    if (size >= PUT_CHUNK_BYTES) {
      const all = Buffer.concat(pending, size);
      let at = 0;
      for (; at + PUT_CHUNK_BYTES <= all.length; at += PUT_CHUNK_BYTES) yield all.subarray(at, at + PUT_CHUNK_BYTES);
      pending = at < all.length ? [all.subarray(at)] : [];
      size = all.length - at;
    }
  }
  if (size) yield Buffer.concat(pending, size);
}

export interface PluginObjectStoreOptions {
  client: ObjectStorePluginClient;
  bucket: string;
  /** The location's prefix ("" for none); keys of this store live under `<prefix>/`. */
  prefix?: string;
}

/** cairn's ObjectStore over an ObjectStore plugin (see the file comment for what the protocol cannot say). */
export class PluginObjectStore implements ObjectStore {
  readonly description: string;
  private readonly client: ObjectStorePluginClient;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(opts: PluginObjectStoreOptions) {
    this.client = opts.client;
    this.bucket = opts.bucket;
    const p = (opts.prefix ?? '').replace(/^\/+|\/+$/g, '');
    this.prefix = p ? `${p}/` : '';
    this.description = `${opts.client.id.name}:${opts.bucket}${p ? `/${p}` : ''}`;
  }

  private full(key: string): string {
    return this.prefix + key;
  }

  private relative(key: string): string {
    return key.startsWith(this.prefix) ? key.slice(this.prefix.length) : key;
  }

  async get(key: string, options: GetOptions = {}): Promise<Buffer> {
    const parts: Buffer[] = [];
    let size = 0;
    const range = options.range;
    for await (const chunk of await this.open(key)) {
      options.signal?.throwIfAborted();
      parts.push(chunk);
      size += chunk.length;
      // A range needs only the bytes up to its end.
      if (range && size >= range.offset + range.length) break;
    }
    const all = Buffer.concat(parts, size);
    if (!range) return all;
    if (all.length < range.offset + range.length) throw new Error(`object ${key} is shorter than the range asked for (${all.length} < ${range.offset + range.length})`);
    return all.subarray(range.offset, range.offset + range.length);
  }

  async getStream(key: string): Promise<Readable> {
    return Readable.from(await this.open(key), { objectMode: false });
  }

  /**
   * The object's bytes, or ObjectNotFoundError. A plugin's GetObject fails in its own words for a missing object,
   * so the first message is read here and a failure is told apart by asking ObjectExists.
   */
  private async open(key: string): Promise<AsyncGenerator<Buffer>> {
    const source = this.client.getObject(this.bucket, this.full(key));
    let first: IteratorResult<Buffer>;
    try {
      first = await source.next();
    } catch (err) {
      if (!(await this.client.objectExists(this.bucket, this.full(key)).catch(() => true))) throw new ObjectNotFoundError(key);
      throw err;
    }
    return (async function* () {
      if (first.done) return;
      yield first.value;
      yield* source;
    })();
  }

  async put(key: string, body: Buffer | Readable, options: PutOptions = {}): Promise<void> {
    options.signal?.throwIfAborted();
    await this.client.putObject(this.bucket, this.full(key), body);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    // Velero's protocol has no stat: existence only, size and time unknown.
    return (await this.client.objectExists(this.bucket, this.full(key))) ? { key, size: -1, lastModified: new Date(0) } : undefined;
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const keys = await this.client.listObjects(this.bucket, this.full(prefix));
    for (const key of [...keys].sort()) yield { key: this.relative(key), size: -1, lastModified: new Date(0) };
  }

  async listCommonPrefixes(prefix: string, delimiter = '/'): Promise<string[]> {
    const found = await this.client.listCommonPrefixes(this.bucket, this.full(prefix), delimiter);
    return found.map((p) => this.relative(p)).sort();
  }

  async delete(key: string): Promise<void> {
    await this.client.deleteObject(this.bucket, this.full(key));
  }

  /** Velero's protocol signs download (GET) URLs; a plugin that cannot (its own error) leaves clients to the server. */
  async signedUrl(key: string, options: SignedUrlOptions): Promise<string | undefined> {
    if (options.method !== 'GET') return undefined;
    try {
      return await this.client.createSignedURL(this.bucket, this.full(key), options.expiresSeconds * 1000);
    } catch (err) {
      if (err instanceof PluginCallError) return undefined;
      throw err;
    }
  }
}
