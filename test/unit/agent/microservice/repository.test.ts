import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRepositoryForVolume } from '../../../../src/storage/volume-repository.js';
import { findParentSnapshot, realSource } from '../../../../src/agent/microservice/pod-volume.js';
import { Repository } from '../../../../src/datapath/repository.js';
import { backup } from '../../../../src/datapath/uploader.js';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';
import type { Kube } from '../../../../src/kube/client.js';
import type { PodVolumeBackup } from '../../../../src/api/index.js';

const FAST_KDF = { N: 1024, r: 8, p: 1 };

/** Just enough of a cluster: one filesystem location and, optionally, the credentials Secret. */
function fakeKube(root: string, password: string | undefined): Kube {
  const location = {
    apiVersion: 'velero.io/v1',
    kind: 'BackupStorageLocation',
    metadata: { name: 'default', namespace: 'velero' },
    spec: { provider: 'filesystem', objectStorage: { bucket: 'bucket', prefix: 'cluster1' }, config: { root } },
  };
  const custom = {
    getNamespacedCustomObject: async (a: { name: string }) => {
      if (a.name === 'default') return location;
      throw Object.assign(new Error('not found'), { code: 404 });
    },
  };
  const core = {
    readNamespacedSecret: async () => {
      if (password === undefined) throw Object.assign(new Error('not found'), { code: 404 });
      return { data: { 'repository-password': Buffer.from(password).toString('base64') } };
    },
  };
  return { custom, core } as unknown as Kube;
}

describe('openRepositoryForVolume', () => {
  it('opens the repository under kopia/<namespace>/ of the location with the password from velero-repo-credentials', async () => {
    const root = mkdtempSync(join(tmpdir(), 'bsl-'));
    const store = new FilesystemObjectStore({ root: join(root, 'bucket', 'cluster1', 'kopia', 'app') });
    const created = await Repository.init({ store, password: 'pw-1', kdf: FAST_KDF });
    const { repository, location } = await openRepositoryForVolume({ kube: fakeKube(root, 'pw-1'), namespace: 'velero', bslName: 'default', volumeNamespace: 'app' });
    expect(repository.config.id).toBe(created.config.id);
    expect(location).toContain('kopia/app/');
  });

  it('fails clearly when the repository was not created yet, or the Secret or location is missing, without the password', async () => {
    const root = mkdtempSync(join(tmpdir(), 'bsl-'));
    mkdirSync(join(root, 'bucket', 'cluster1'), { recursive: true });
    const err = await openRepositoryForVolume({ kube: fakeKube(root, 'secret-pw'), namespace: 'velero', bslName: 'default', volumeNamespace: 'app' }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/no repository for volume namespace "app" .*BackupRepository must be Ready first/);
    expect((err as Error).message).not.toContain('secret-pw');
    // Without the Secret, "no repository" still wins when there is none; with one there, the Secret is missed.
    await expect(openRepositoryForVolume({ kube: fakeKube(root, undefined), namespace: 'velero', bslName: 'default', volumeNamespace: 'app' })).rejects.toThrow(/no repository for volume namespace "app"/);
    mkdirSync(join(root, 'bucket', 'cluster1', 'kopia', 'app'), { recursive: true });
    writeFileSync(join(root, 'bucket', 'cluster1', 'kopia', 'app', 'config'), 'sealed');
    await expect(openRepositoryForVolume({ kube: fakeKube(root, undefined), namespace: 'velero', bslName: 'default', volumeNamespace: 'app' })).rejects.toThrow(
      'Secret velero-repo-credentials not found in namespace velero',
    );
    await expect(openRepositoryForVolume({ kube: fakeKube(root, 'x'), namespace: 'velero', bslName: 'other', volumeNamespace: 'app' })).rejects.toThrow(
      'backup storage location "other" not found',
    );
  });
});

describe('incremental parents', () => {
  it('the real source is <podNamespace>/<podName>/<pvc name or volume>', () => {
    const pvb = { metadata: { annotations: {} }, spec: { pod: { namespace: 'app', name: 'web-0' }, volume: 'data' } } as unknown as PodVolumeBackup;
    expect(realSource(pvb)).toBe('app/web-0/data');
    pvb.metadata!.annotations = { 'velero.io/pvc-name': 'data-web-0' };
    expect(realSource(pvb)).toBe('app/web-0/data-web-0');
  });

  it('the parent is the latest snapshot tagged with the same real source, whatever the mount path was', async () => {
    const repo = await Repository.init({ store: new FilesystemObjectStore({ root: mkdtempSync(join(tmpdir(), 'repo-')) }), password: 'p', kdf: FAST_KDF });
    const dir = mkdtempSync(join(tmpdir(), 'vol-'));
    writeFileSync(join(dir, 'f'), 'hello world');
    const tag = (s: string) => ({ 'snapshot-real-source': s });
    await backup({ source: dir, repository: repo, tags: tag('app/web-0/data') });
    const second = await backup({ source: dir, repository: repo, tags: tag('app/web-0/data'), parent: null });
    await backup({ source: dir, repository: repo, tags: tag('app/web-1/data') });
    expect(await findParentSnapshot(repo.snapshots, 'app/web-0/data')).toBe(second.snapshotId);
    expect(await findParentSnapshot(repo.snapshots, 'app/other/data')).toBeUndefined();
  });
});
