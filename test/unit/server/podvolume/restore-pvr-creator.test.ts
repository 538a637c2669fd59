import { describe, expect, it } from 'vitest';
import { newRestore, type PodVolumeRestore } from '../../../../src/api/index.js';
import { createLogger } from '../../../../src/base/logger.js';
import type { Kube } from '../../../../src/kube/client.js';
import { PodVolumeRestoreCreator } from '../../../../src/server/podvolume/restore-pvr.js';
import type { VolumeToRestore } from '../../../../src/server/podvolume/restore-volumes.js';

/** PVRs in memory behind the custom-objects API; PVCs by name. */
function fakeKube(existing: PodVolumeRestore[] = [], pvcs: Record<string, string> = {}) {
  const stored = [...existing];
  const selectors: string[] = [];
  const kube = {
    server: 'fake',
    custom: {
      listNamespacedCustomObject: async (a: { labelSelector?: string }) => {
        selectors.push(a.labelSelector ?? '');
        const want = (a.labelSelector ?? '').split(',').filter(Boolean).map((kv) => kv.split('='));
        return { items: stored.filter((p) => want.every(([k, v]) => p.metadata?.labels?.[k ?? ''] === v)), metadata: {} };
      },
      createNamespacedCustomObject: async (a: { body: PodVolumeRestore }) => {
        const created = structuredClone(a.body);
        created.metadata = { ...created.metadata, name: `${created.metadata?.generateName ?? ''}${stored.length}` };
        stored.push(created);
        return created;
      },
    },
    core: {
      readNamespacedPersistentVolumeClaim: async (a: { name: string; namespace: string }) => {
        const uid = pvcs[`${a.namespace}/${a.name}`];
        if (!uid) throw Object.assign(new Error('not found'), { code: 404 });
        return { metadata: { uid } };
      },
    },
  } as unknown as Kube;
  return { kube, stored, selectors };
}

const restore = newRestore({ namespace: 'cairn', name: 'r1', spec: { backupName: 'b1' } });
restore.metadata.uid = 'ru';
const pod = { name: 'web-0', namespace: 'copy', uid: 'pu' };
const volumes: VolumeToRestore[] = [
  { volume: 'data', snapshotID: 's-data', uploaderType: 'kopia', claimName: 'data' },
  { volume: 'scratch', snapshotID: 's-scratch', uploaderType: 'kopia' },
];
const log = createLogger({ level: 'fatal' });

describe('creating the PVRs of a restored pod', () => {
  it("ensures the source namespace repository of the backup's location once, then creates one PVR per volume (pvc-uid for the claim)", async () => {
    const { kube, stored } = fakeKube([], { 'copy/data': 'pvc-uid' });
    const ensured: string[] = [];
    // The location the backup was synced from here, whatever the PVBs call the location of the cluster that made them.
    const creator = new PodVolumeRestoreCreator({ kube, namespace: 'cairn', restore, backupStorageLocation: 'from-velero', log, ensureRepository: async (bsl, ns) => void ensured.push(`${bsl}/${ns}`) });
    const out = await creator.createForPod({ pod, sourceNamespace: 'app', volumes });
    expect(out.errors).toEqual([]);
    expect(ensured).toEqual(['from-velero/app']);
    expect(stored.map((p) => p.spec.backupStorageLocation)).toEqual(['from-velero', 'from-velero']);
    expect(stored.map((p) => [p.metadata?.name, p.spec.volume, p.spec.sourceNamespace, p.metadata?.labels?.['velero.io/pvc-uid']])).toEqual([
      ['r1-0', 'data', 'app', 'pvc-uid'],
      ['r1-1', 'scratch', 'app', undefined],
    ]);
    expect(out.podVolumeRestores).toHaveLength(2);
  });

  it('is idempotent: PVRs of this restore, pod UID and volume that exist are reused (server restart)', async () => {
    const first = fakeKube();
    await new PodVolumeRestoreCreator({ kube: first.kube, namespace: 'cairn', restore, backupStorageLocation: 'default', log, ensureRepository: async () => {} }).createForPod({ pod, sourceNamespace: 'app', volumes: volumes.slice(0, 1) });
    const { kube, stored, selectors } = fakeKube(first.stored);
    const out = await new PodVolumeRestoreCreator({ kube, namespace: 'cairn', restore, backupStorageLocation: 'default', log, ensureRepository: async () => {} }).createForPod({ pod, sourceNamespace: 'app', volumes });
    expect(selectors).toEqual(['velero.io/restore-uid=ru,velero.io/pod-uid=pu']);
    expect(stored.map((p) => p.spec.volume)).toEqual(['data', 'scratch']);
    expect(out.podVolumeRestores.map((p) => p.metadata?.name)).toEqual(['r1-0', 'r1-1']);
  });

  it('a repository that is not Ready starts no PVR and says why; the next pod tries again', async () => {
    const { kube, stored } = fakeKube();
    let calls = 0;
    const creator = new PodVolumeRestoreCreator({
      kube,
      namespace: 'cairn',
      restore,
      backupStorageLocation: 'default',
      log,
      ensureRepository: async () => {
        calls++;
        throw new Error('backup repository app-default-kopia is not ready: bucket gone');
      },
    });
    const out = await creator.createForPod({ pod, sourceNamespace: 'app', volumes: volumes.slice(1) });
    expect(out.errors).toEqual(['pod volume restore of volume scratch of pod copy/web-0 not started: backup repository app-default-kopia is not ready: bucket gone']);
    expect(stored).toEqual([]);
    await creator.createForPod({ pod: { ...pod, uid: 'other' }, sourceNamespace: 'app', volumes: volumes.slice(1) });
    expect(calls).toBe(2);
  });
});
