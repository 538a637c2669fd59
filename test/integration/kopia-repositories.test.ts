/**
 * Restoring volumes from kopia repositories Velero's kopia made (built from the Go module proxy), laid out and keyed
 * as Velero lays them out: under `<prefix>/kopia/<namespace>/` of the location's bucket on MinIO (kopia's S3
 * storage) and of a filesystem location (kopia's sharded filesystem storage), password in velero-repo-credentials
 * or Velero's default. Real trees: large random files, many small ones, a sparse file, symlinks, modes with setuid,
 * owners, empty directories, set times; the restore must match byte for byte. A wrong password, a corrupt pack and
 * a missing index must fail clearly.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBackupStorageLocation, type BackupStorageLocation } from '../../src/api/index.js';
import { RepositoryCorruptError } from '../../src/datapath/errors.js';
import { restoreKopiaSnapshot } from '../../src/datapath/kopia/restore.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import type { ObjectStore } from '../../src/plugins/object-store/index.js';
import { openRepositoryStore } from '../../src/storage/repository-store.js';
import { openVeleroKopiaRepository, VeleroRepositoryPasswordError } from '../../src/storage/velero-kopia.js';
import { clusterInfo, kubeConfig, kubectl, s3Client } from '../support/cluster.js';
import { createVeleroKopiaRepository, veleroKopia, type VeleroKopiaRepo } from '../../tools/peers/velero-kopia.js';
import { MiB, readTree, timeMismatches, withoutTimes, writeDataset, type Tree } from '../support/volume-tree.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-kopia-${RUN}`;
const PREFIX = `kopia-it-${RUN}`;
const VOLUME_NS = 'app';
const temps: string[] = [];
let kube: Kube;
let source: string;
let expected: Tree;

const temp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  temps.push(d);
  return d;
};
const bucket = () => clusterInfo().s3.bucket;

function s3Location(prefix: string): BackupStorageLocation {
  const { s3 } = clusterInfo();
  return newBackupStorageLocation({
    namespace: NS,
    name: 'minio',
    spec: { provider: 'aws', objectStorage: { bucket: s3.bucket, prefix }, credential: { name: 'creds', key: 'cloud' }, config: { region: s3.region, s3Url: s3.endpoint, s3ForcePathStyle: 'true' } },
  });
}

async function listKeys(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const res = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ContinuationToken: token }));
    keys.push(...(res.Contents ?? []).map((c) => c.Key ?? ''));
    token = res.NextContinuationToken;
  } while (token);
  return keys;
}

/** A sparse file: 48 MiB with data only at 8 MiB and at the end. */
function writeSparse(path: string): void {
  const fd = openSync(path, 'w');
  writeSync(fd, randomBytes(64 * 1024), 0, 64 * 1024, 8 * MiB);
  writeSync(fd, Buffer.from('end'), 0, 3, 48 * MiB - 3);
  closeSync(fd);
}

beforeAll(async () => {
  veleroKopia();
  kube = kubeFromConfig(kubeConfig());
  const { s3 } = clusterInfo();
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: NS },
      stringData: { cloud: `[default]\naws_access_key_id = ${s3.accessKeyId}\naws_secret_access_key = ${s3.secretAccessKey}\n` },
    }),
  });
  source = temp('kopia-src-');
  writeDataset(source, { large: [12, 3], small: 400, seed: 7 });
  writeSparse(join(source, 'sparse.img'));
  mkdirSync(join(source, 'empty', 'nested-empty'), { recursive: true });
  writeFileSync(join(source, 'setuid-tool'), '#!/bin/sh\n');
  chmodSync(join(source, 'setuid-tool'), 0o4755);
  expected = readTree(source);
}, 1_200_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', NS, '--wait=false'], { allowFailure: true });
  const keys = await listKeys(PREFIX);
  for (let i = 0; i < keys.length; i += 1000) {
    await s3Client().send(new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) } }));
  }
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function expectSameTree(target: string): void {
  const got = readTree(target);
  // The restore target's own mode and times are not the snapshot root's business.
  const { '.': _a, ...want } = withoutTimes(expected);
  const { '.': _b, ...have } = withoutTimes(got);
  expect(have).toEqual(want);
  expect(timeMismatches(Object.fromEntries(Object.entries(expected).filter(([k]) => k !== '.')), got)).toEqual([]);
  // The sparse file comes back sparse: far fewer blocks than its 48 MiB.
  expect(statSync(join(target, 'sparse.img')).blocks * 512).toBeLessThan(4 * MiB);
}

describe('a Velero kopia repository on MinIO (kopia S3 storage)', () => {
  let repo: VeleroKopiaRepo;
  let snapshotId: string;
  let store: ObjectStore;

  beforeAll(async () => {
    const { s3 } = clusterInfo();
    repo = await createVeleroKopiaRepository({ kind: 's3', bucket: s3.bucket, prefix: `${PREFIX}/kopia/${VOLUME_NS}/`, endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, region: s3.region });
    snapshotId = await repo.snapshot(source, { 'snapshot-requester': 'pod-volume-backup-restore', volume: 'data' });
    store = await openRepositoryStore({ location: s3Location(PREFIX), volumeNamespace: VOLUME_NS, kube });
  }, 600_000);

  it("restores byte for byte through the location's store, with Velero's default password when the Secret holds another", async () => {
    const { repository, passwordSource } = await openVeleroKopiaRepository({ store, secretPassword: 'cairns-own-random-password' });
    expect(passwordSource).toBe('velero-default');
    expect(repository.config).toMatchObject({ hash: 'BLAKE2B-256-128', encryption: 'AES256-GCM-HMAC-SHA256', version: 3, epochs: true });
    const snap = repository.loadSnapshot(snapshotId);
    // The kopia CLI stores --tags as `tag:<key>` (Velero's uploader sets its tags without the prefix).
    expect(snap.tags).toMatchObject({ 'tag:snapshot-requester': 'pod-volume-backup-restore', 'tag:volume': 'data' });
    const target = temp('kopia-s3-restore-');
    const progress: number[] = [];
    const before = await listKeys(`${PREFIX}/kopia/`);
    const result = await restoreKopiaSnapshot({ repository, snapshotId, target, onProgress: (p) => progress.push(p.doneBytes), progressIntervalMs: 0 });
    expect(result.errors).toEqual([]);
    expectSameTree(target);
    expect(progress.at(-1)).toBe(result.stats.bytes);
    // cairn wrote nothing into the repository.
    expect(await listKeys(`${PREFIX}/kopia/`)).toEqual(before);
  });

  it('a corrupt pack fails the restore naming the pack', async () => {
    // A copy of the repository, one pack of which gets a flipped byte.
    const copyPrefix = `${PREFIX}/corrupt/kopia/${VOLUME_NS}/`;
    for (const key of await listKeys(`${PREFIX}/kopia/${VOLUME_NS}/`)) {
      const body = Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: key }))).Body!.transformToByteArray());
      const name = key.slice(`${PREFIX}/kopia/${VOLUME_NS}/`.length);
      if (name.startsWith('p')) body[body.length >> 1] = body[body.length >> 1]! ^ 0x55;
      await s3Client().send(new PutObjectCommand({ Bucket: bucket(), Key: copyPrefix + name, Body: body }));
    }
    const corrupt = await openRepositoryStore({ location: s3Location(`${PREFIX}/corrupt`), volumeNamespace: VOLUME_NS, kube });
    const { repository } = await openVeleroKopiaRepository({ store: corrupt, secretPassword: 'static-passw0rd' });
    const err = await restoreKopiaSnapshot({ repository, snapshotId, target: temp('kopia-corrupt-') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepositoryCorruptError);
    expect((err as Error).message).toMatch(/ in pack p[0-9a-f]+-s[0-9a-f]+ at \d+ does not authenticate: the pack is corrupted$/);
  });

  it('a missing index leaves the snapshot unreadable, and says so', async () => {
    const copyPrefix = `${PREFIX}/noindex/kopia/${VOLUME_NS}/`;
    for (const key of await listKeys(`${PREFIX}/kopia/${VOLUME_NS}/`)) {
      const name = key.slice(`${PREFIX}/kopia/${VOLUME_NS}/`.length);
      if (name.startsWith('xn')) continue;
      const body = Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: key }))).Body!.transformToByteArray());
      await s3Client().send(new PutObjectCommand({ Bucket: bucket(), Key: copyPrefix + name, Body: body }));
    }
    const broken = await openRepositoryStore({ location: s3Location(`${PREFIX}/noindex`), volumeNamespace: VOLUME_NS, kube });
    const { repository } = await openVeleroKopiaRepository({ store: broken, secretPassword: 'static-passw0rd' });
    expect(() => repository.loadSnapshot(snapshotId)).toThrow(`snapshot ${snapshotId} not found in the kopia repository`);
  });
});

describe('a Velero kopia repository with its own password', () => {
  it('opens with the password in the Secret, and says clearly when neither that nor the default opens it', async () => {
    const { s3 } = clusterInfo();
    const repo = await createVeleroKopiaRepository(
      { kind: 's3', bucket: s3.bucket, prefix: `${PREFIX}/custom/kopia/${VOLUME_NS}/`, endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, region: s3.region },
      'a-password-the-user-chose',
    );
    const small = temp('kopia-small-');
    writeFileSync(join(small, 'f.txt'), 'data\n');
    const id = await repo.snapshot(small);
    const store = await openRepositoryStore({ location: s3Location(`${PREFIX}/custom`), volumeNamespace: VOLUME_NS, kube });
    const err = await openVeleroKopiaRepository({ store, secretPassword: 'not-it' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VeleroRepositoryPasswordError);
    expect((err as Error).message).toContain("opens neither with the password in Secret velero-repo-credentials nor with Velero's default");
    expect((err as Error).message).not.toContain('a-password-the-user-chose');
    const { repository, passwordSource } = await openVeleroKopiaRepository({ store, secretPassword: 'a-password-the-user-chose' });
    expect(passwordSource).toBe('secret');
    expect(repository.loadSnapshot(id).id).toBe(id);
  });
});

describe('a Velero kopia repository on a filesystem location (kopia filesystem storage, sharded)', () => {
  it('restores byte for byte', async () => {
    const root = temp('kopia-fs-bsl-');
    const repoDir = join(root, 'bucket', 'cluster1', 'kopia', VOLUME_NS);
    mkdirSync(repoDir, { recursive: true });
    const repo = await createVeleroKopiaRepository({ kind: 'filesystem', path: repoDir });
    const snapshotId = await repo.snapshot(source);
    const location = newBackupStorageLocation({ namespace: NS, name: 'files', spec: { provider: 'filesystem', objectStorage: { bucket: 'bucket', prefix: 'cluster1' }, config: { root } } });
    const store = await openRepositoryStore({ location, volumeNamespace: VOLUME_NS, kube });
    const { repository } = await openVeleroKopiaRepository({ store, secretPassword: 'static-passw0rd' });
    expect(repository.blobs.layout.kind).toBe('sharded');
    const target = temp('kopia-fs-restore-');
    const result = await restoreKopiaSnapshot({ repository, snapshotId, target });
    expect(result.errors).toEqual([]);
    expectSameTree(target);
  });
});
