/**
 * Ranged reads of the S3 store go over undici (undici-handler.ts), whole-object reads over node:http: the request the
 * server sees (signed, path-style, ranged), and how failures reach the caller either way. A local HTTP server plays S3; MinIO covers the rest (the
 * integration tier's object-store conformance suite).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ObjectNotFoundError, ObjectStoreError, S3ObjectStore } from '../../../src/plugins/object-store/index.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function fakeS3(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<S3ObjectStore> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return new S3ObjectStore({
    bucket: 'bkt',
    prefix: 'pre',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-real-secret' },
  });
}

describe('S3 object reads over undici', () => {
  it('sends a signed, path-style ranged GET and returns the bytes', async () => {
    const object = Buffer.from('0123456789abcdef');
    const seen: { url?: string; range?: string; auth?: string } = {};
    const store = await fakeS3((req, res) => {
      seen.url = req.url;
      seen.range = req.headers.range;
      seen.auth = req.headers.authorization;
      const [, from, to] = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '') ?? [];
      const body = from === undefined ? object : object.subarray(Number(from), Number(to) + 1);
      res.writeHead(from === undefined ? 200 : 206, { 'content-length': body.length, 'content-type': 'application/octet-stream' });
      res.end(body);
    });
    expect((await store.get('data/ab/cd', { range: { offset: 4, length: 6 } })).toString()).toBe('456789');
    expect(seen.url).toBe('/bkt/pre/data/ab/cd?x-id=GetObject');
    expect(seen.range).toBe('bytes=4-9');
    expect(seen.auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
    expect(seen.auth).not.toContain('not-a-real-secret');
    expect((await store.get('whole')).equals(object)).toBe(true);
  });

  it('a missing object is ObjectNotFoundError', async () => {
    const store = await fakeS3((_req, res) => {
      const body = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>';
      res.writeHead(404, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    await expect(store.get('missing', { range: { offset: 0, length: 10 } })).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(store.get('missing')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('a connection cut in the middle of a body is a retryable store error', async () => {
    const store = await fakeS3((_req, res) => {
      res.writeHead(200, { 'content-length': 1000 });
      res.write(Buffer.alloc(100));
      setImmediate(() => res.socket?.destroy());
    });
    for (const read of [store.get('cut', { range: { offset: 0, length: 1000 } }), store.get('cut')]) {
      const err = await read.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ObjectStoreError);
      expect((err as ObjectStoreError).retryable).toBe(true);
    }
  });

  it('stops a read when its signal is aborted', async () => {
    const store = await fakeS3(() => {
      // Never answers: only the abort can end the request.
    });
    const controller = new AbortController();
    const read = store.get('slow', { range: { offset: 0, length: 10 }, signal: controller.signal });
    controller.abort();
    const err = await read.catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
  });
});
