/**
 * The S3 backend against MinIO from the local test bed: the object-store conformance suite, then a repository on S3
 * end to end (init, backup, incremental backup, restore, check) and an unreachable endpoint's error.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { S3ObjectStore, RetryingObjectStore, ObjectStoreError, RetriesExhaustedError } from '../../src/plugins/object-store/index.js';
import { Repository } from '../../src/datapath/repository.js';
import { backup } from '../../src/datapath/uploader.js';
import { restore } from '../../src/datapath/restorer.js';
import { check } from '../../src/datapath/check.js';
import { objectStoreConformance } from '../unit/object-store/conformance.js';
import { describeTree } from '../unit/datapath/helpers.js';
import { clusterInfo } from '../support/cluster.js';

function s3Store(prefix: string): S3ObjectStore {
  const { s3 } = clusterInfo();
  return new S3ObjectStore({
    bucket: s3.bucket,
    prefix,
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
}

const dirs: string[] = [];
const temp = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `cairn-s3-${tag}-`));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('S3 object store (MinIO)', () => {
  objectStoreConformance(async () => s3Store(`conformance-${randomBytes(6).toString('hex')}/`));

  it('uploads a large stream as a multipart upload', async () => {
    const store = new S3ObjectStore({ ...{}, bucket: clusterInfo().s3.bucket, prefix: `mp-${randomBytes(4).toString('hex')}/`, endpoint: clusterInfo().s3.endpoint, region: clusterInfo().s3.region, forcePathStyle: true, credentials: { accessKeyId: clusterInfo().s3.accessKeyId, secretAccessKey: clusterInfo().s3.secretAccessKey }, partSize: 5 << 20 });
    const parts = [randomBytes(4 << 20), randomBytes(4 << 20), randomBytes(1 << 20)];
    const { Readable } = await import('node:stream');
    await store.put('big', Readable.from(parts));
    expect((await store.get('big')).equals(Buffer.concat(parts))).toBe(true);
  });

  it('holds a repository: backup, incremental backup, restore, check', async () => {
    const store = s3Store(`repo-${randomBytes(6).toString('hex')}/`);
    await Repository.init({ store, password: 'pw', kdf: { N: 1024, r: 8, p: 1 } });
    const src = temp('src');
    mkdirSync(join(src, 'd'));
    writeFileSync(join(src, 'd/random'), randomBytes(3 << 20));
    writeFileSync(join(src, 'text'), 'hello world\n'.repeat(20000));
    const first = await backup({ source: src, repository: await Repository.open({ store, password: 'pw' }) });
    const second = await backup({ source: src, repository: await Repository.open({ store, password: 'pw' }) });
    expect(second.stats.newFiles).toBe(0);
    expect(second.parent).toBe(first.snapshotId);
    const dst = temp('dst');
    const r = await restore({ repository: await Repository.open({ store, password: 'pw' }), snapshotId: 'latest', target: dst });
    expect(r.errors).toEqual([]);
    expect(describeTree(dst)).toEqual(describeTree(src));
    expect((await check({ repository: await Repository.open({ store, password: 'pw' }), readData: true })).errors).toEqual([]);
  });

  it('signs GET URLs that fetch the object without credentials', async () => {
    const store = s3Store(`signed-${randomBytes(4).toString('hex')}/`);
    await store.put('file.txt', Buffer.from('signed content'));
    const url = await store.signedUrl('file.txt', { method: 'GET', expiresSeconds: 60 });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('signed content');
  });

  it('reports an unreachable endpoint as a retryable store error', async () => {
    const store = new RetryingObjectStore(
      new S3ObjectStore({ bucket: 'b', endpoint: 'http://127.0.0.1:1', forcePathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }),
      { attempts: 2, baseDelayMs: 1 },
    );
    const err = await store.get('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    expect(((err as Error).cause as ObjectStoreError).retryable).toBe(true);
    expect((err as Error).message).not.toContain('secret');
  });
});
