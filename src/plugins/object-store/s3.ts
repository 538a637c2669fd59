/**
 * S3 object store (@aws-sdk/client-s3): AWS or any S3-compatible server (MinIO, Ceph) via a custom endpoint,
 * path-style addressing and an extra CA bundle. Retries are left to RetryingObjectStore (the SDK's own are off) so
 * every backend retries the same way; errors are mapped to ObjectNotFoundError / ObjectStoreError{retryable}.
 * Stream bodies of unknown or large size go up as multipart uploads.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import type { Readable } from 'node:stream';
import {
  S3Client,
  GetObjectCommand,
  PutObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  DeleteObjectCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  CompleteMultipartUploadCommand,
  AbortMultipartUploadCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions, SignedUrlOptions } from './types.js';
import { ObjectNotFoundError, ObjectStoreError } from './errors.js';
import { UndiciHttpHandler } from './undici-handler.js';

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix inside the bucket, without leading slash; '' or ending in '/'. */
  prefix?: string;
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  /** Path of a PEM file with extra CA certificates. */
  caBundle?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Part size for multipart uploads (default 16 MiB). */
  partSize?: number;
  /** Sockets kept open per client. */
  maxSockets?: number;
}

export class S3ObjectStore implements ObjectStore {
  readonly description: string;
  private readonly client: S3Client;
  /**
   * The same client over undici, for ranged reads: the data path's pack reads, a restore's whole volume
   * (undici-handler.ts says why). Made on the first one: the server, which reads small objects whole, never needs it,
   * and undici's pool held ~20 MB more of its memory at rest (bench:scale, 2,500 namespaces: 192-196 against 170-173
   * MB after the runs).
   */
  private rangedReadClient: S3Client | undefined;
  private readonly makeRangedReadClient: () => S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: number;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ? (options.prefix.endsWith('/') ? options.prefix : options.prefix + '/') : '';
    this.partSize = options.partSize ?? 16 << 20;
    this.description = `s3://${options.bucket}/${this.prefix}`;
    const ca = options.caBundle ? readFileSync(options.caBundle) : undefined;
    const maxSockets = options.maxSockets ?? 16;
    const config = {
      region: options.region ?? 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? false,
      ...(options.credentials ? { credentials: options.credentials } : {}),
      maxAttempts: 1,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    } as const;
    this.client = new S3Client({
      ...config,
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, maxSockets }),
        httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets, ...(ca ? { ca } : {}) }),
        requestTimeout: 120_000,
        connectionTimeout: 10_000,
      },
    });
    this.makeRangedReadClient = () =>
      new S3Client({
        ...config,
        requestHandler: new UndiciHttpHandler({ connections: maxSockets, ...(ca ? { ca } : {}), connectTimeoutMs: 10_000, idleTimeoutMs: 120_000 }),
      });
    this.installUnsignedPayload();
  }

  /**
   * Uploads are sent with `x-amz-content-sha256: UNSIGNED-PAYLOAD`: the SDK would otherwise SHA-256 every byte to
   * sign it (~1 CPU-second per GB here, a whole core at backup speed). Request headers are still signed; the bodies
   * cairn uploads are authenticated by their own encryption and content-hash names, and TLS protects them in
   * transit on https endpoints.
   */
  private installUnsignedPayload(): void {
    this.client.middlewareStack.add(
      (next, context) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if ((context.commandName === 'PutObjectCommand' || context.commandName === 'UploadPartCommand') && request.headers) {
          request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
        }
        return next(args);
      },
      { step: 'build', name: 'cairnUnsignedPayload' },
    );
  }

  private k(key: string): string {
    return this.prefix + key;
  }

  async get(key: string, options: GetOptions = {}): Promise<Buffer> {
    try {
      const range = options.range ? `bytes=${options.range.offset}-${options.range.offset + options.range.length - 1}` : undefined;
      const client = options.range ? (this.rangedReadClient ??= this.makeRangedReadClient()) : this.client;
      const res = await client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.k(key), ...(range ? { Range: range } : {}) }),
        { abortSignal: options.signal },
      );
      const body = await readBody(res.Body as Readable, res.ContentLength, options.target);
      if (options.range && body.length !== options.range.length) {
        throw new ObjectStoreError(`object ${key} is shorter than the range ${options.range.offset}+${options.range.length}`, { retryable: false });
      }
      return body;
    } catch (err) {
      throw mapS3Error(err, key);
    }
  }

  async getStream(key: string, options: { signal?: AbortSignal } = {}): Promise<Readable> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.k(key) }), { abortSignal: options.signal });
      return res.Body as Readable;
    } catch (err) {
      throw mapS3Error(err, key);
    }
  }

  async put(key: string, body: Buffer | Readable, options: PutOptions = {}): Promise<void> {
    try {
      if (Buffer.isBuffer(body) || (options.contentLength !== undefined && options.contentLength <= this.partSize)) {
        await this.client.send(
          new PutObjectCommand({ Bucket: this.bucket, Key: this.k(key), Body: body, ...(options.contentLength !== undefined ? { ContentLength: options.contentLength } : {}) }),
          { abortSignal: options.signal },
        );
        return;
      }
      await this.multipart(key, body, options.signal);
    } catch (err) {
      throw mapS3Error(err, key);
    }
  }

  /** Multipart upload of a stream: parts of partSize, one at a time, aborted on any failure. */
  private async multipart(key: string, body: Readable, signal?: AbortSignal): Promise<void> {
    const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key) }), { abortSignal: signal });
    const uploadId = created.UploadId!;
    const parts: CompletedPart[] = [];
    try {
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        const partNumber = parts.length + 1;
        const res = await this.client.send(
          new UploadPartCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: uploadId, PartNumber: partNumber, Body: Buffer.concat(pending) }),
          { abortSignal: signal },
        );
        parts.push({ PartNumber: partNumber, ETag: res.ETag! });
        pending = [];
        pendingBytes = 0;
      };
      for await (const chunk of body as AsyncIterable<Buffer>) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= this.partSize) await flush();
      }
      if (pendingBytes > 0 || parts.length === 0) await flush();
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: uploadId, MultipartUpload: { Parts: parts } }),
        { abortSignal: signal },
      );
    } catch (err) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: uploadId })).catch(() => undefined);
      throw err;
    }
  }

  /** A pre-signed GET/PUT URL for the endpoint this store talks to (DownloadRequests hand these out). */
  async signedUrl(key: string, options: SignedUrlOptions): Promise<string> {
    const command = options.method === 'PUT' ? new PutObjectCommand({ Bucket: this.bucket, Key: this.k(key) }) : new GetObjectCommand({ Bucket: this.bucket, Key: this.k(key) });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresSeconds });
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
      return { key, size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) };
    } catch (err) {
      const mapped = mapS3Error(err, key);
      if (mapped instanceof ObjectNotFoundError) return undefined;
      throw mapped;
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<ObjectInfo> {
    let token: string | undefined;
    do {
      let res;
      try {
        res = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.k(prefix), ...(token ? { ContinuationToken: token } : {}) }),
          { abortSignal: options.signal },
        );
      } catch (err) {
        throw mapS3Error(err, prefix);
      }
      for (const o of res.Contents ?? []) {
        if (!o.Key) continue;
        yield { key: o.Key.slice(this.prefix.length), size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0) };
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
  }

  async listCommonPrefixes(prefix: string, delimiter = '/'): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    try {
      do {
        const res = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.k(prefix), Delimiter: delimiter, ...(token ? { ContinuationToken: token } : {}) }),
        );
        for (const p of res.CommonPrefixes ?? []) if (p.Prefix) out.push(p.Prefix.slice(this.prefix.length));
        token = res.IsTruncated ? res.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw mapS3Error(err, prefix);
    }
    return out;
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
    } catch (err) {
      const mapped = mapS3Error(err, key);
      if (!(mapped instanceof ObjectNotFoundError)) throw mapped;
    }
  }
}

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: unknown;
}

/** Maps SDK and network errors to the store errors; never includes credentials (the SDK's messages carry none). */
export function mapS3Error(err: unknown, key: string): Error {
  if (err instanceof ObjectStoreError) return err;
  const e = err as SdkError;
  if (e?.name === 'AbortError') return err as Error;
  const status = e?.$metadata?.httpStatusCode;
  if (status === 404 || e?.name === 'NoSuchKey' || e?.name === 'NotFound') return new ObjectNotFoundError(key);
  const throttled = status === 429 || status === 503 || e?.name === 'SlowDown' || e?.name === 'Throttling' || e?.name === 'RequestTimeout';
  const serverError = status !== undefined && status >= 500;
  // undici's connection failures and timeouts carry codes UND_ERR_SOCKET, UND_ERR_CONNECT_TIMEOUT, UND_ERR_*_TIMEOUT.
  const network = status === undefined && /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN|socket hang up|TimeoutError|UND_ERR_(SOCKET|CLOSED|CONNECT_TIMEOUT|HEADERS_TIMEOUT|BODY_TIMEOUT)/i.test(`${e?.code ?? ''} ${e?.name ?? ''} ${e?.message ?? ''}`);
  const what = status ? `HTTP ${status} ${e?.name ?? ''}`.trim() : (e?.code ?? e?.name ?? 'error');
  return new ObjectStoreError(`s3: ${what} on ${key}: ${e?.message ?? String(err)}`, { retryable: throttled || serverError || network || Boolean(e?.$retryable), cause: err });
}

/**
 * A response body read into one buffer: with its length known, chunks are copied straight into a buffer of that size
 * (`target` when it is large enough), one copy per byte. The SDK's transformToByteArray gathers the chunks and
 * concatenates them, and Buffer.from copied the result again: on a restore from S3 those copies and the garbage
 * they left were a second of main-thread CPU per GB.
 */
export async function readBody(body: AsyncIterable<Buffer | Uint8Array>, length: number | undefined, target?: Buffer): Promise<Buffer> {
  if (length === undefined) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    return Buffer.concat(chunks);
  }
  const out = target && target.length >= length ? target.subarray(0, length) : Buffer.allocUnsafe(length);
  let at = 0;
  for await (const chunk of body) {
    if (at + chunk.byteLength > length) throw new ObjectStoreError(`response body is longer than its Content-Length ${length}`, { retryable: true });
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  // A connection cut mid-body: the bytes are not known to be short, only the transfer was.
  if (at < length) throw new ObjectStoreError(`response body ended after ${at} of its ${length} bytes`, { retryable: true });
  return out;
}
