/**
 * The object-store interface: a flat key → bytes store. The data path (repositories) and the server (backup storage
 * locations) both use it, so it stays general: keys are strings with '/' as the conventional separator, bodies are
 * Buffers or streams, every write replaces a whole object atomically.
 */
import type { Readable } from 'node:stream';

export interface ByteRange {
  /** First byte to read. */
  offset: number;
  /** How many bytes; the read fails if the object is shorter. */
  length: number;
}

export interface ObjectInfo {
  key: string;
  /** Bytes; -1 when the backend cannot tell (an ObjectStore plugin: Velero's protocol has no stat). */
  size: number;
  lastModified: Date;
}

export interface GetOptions {
  range?: ByteRange;
  signal?: AbortSignal;
  /**
   * With a range: read into the start of this buffer (at least range.length bytes) to avoid an allocation. Backends
   * may ignore it; always use the returned buffer.
   */
  target?: Buffer;
}

export interface PutOptions {
  signal?: AbortSignal;
  /** Length of a stream body when known (lets S3 use a single PUT). */
  contentLength?: number;
}

export interface SignedUrlOptions {
  method: 'GET' | 'PUT';
  expiresSeconds: number;
}

export interface ObjectStore {
  /** A short description for messages, never containing credentials (e.g. "s3://bucket/prefix"). */
  readonly description: string;
  /** The whole object, or a byte range of it. Throws ObjectNotFoundError if it does not exist. */
  get(key: string, options?: GetOptions): Promise<Buffer>;
  /** The object as a stream (for large objects). Throws ObjectNotFoundError if it does not exist. */
  getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable>;
  /** Writes the whole object atomically: readers see the old object or the new one, never a part. */
  put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void>;
  /** Size and time of an object, or undefined if it does not exist. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Every object whose key starts with prefix, in ascending key order, fetched page by page. */
  list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ObjectInfo>;
  /** The distinct "directories" directly under prefix: keys cut after the first delimiter past prefix (delimiter kept). */
  listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]>;
  /** Deletes an object; deleting a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** A pre-signed URL, where the backend supports it; undefined when it cannot sign this one (clients then use the server). */
  signedUrl?(key: string, options: SignedUrlOptions): Promise<string | undefined>;
}
