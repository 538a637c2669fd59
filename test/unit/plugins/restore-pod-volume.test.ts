import { describe, expect, it } from 'vitest';
import { newBackup, newPodVolumeBackup, newRestore, type PodVolumeBackup, type Restore } from '../../../src/api/index.js';
import { createLogger } from '../../../src/base/logger.js';
import type { Kube } from '../../../src/kube/client.js';
import { podVolumeRestoreAction } from '../../../src/server/item-actions/restore-pod-volume.js';
import type { UnstructuredObject } from '../../../src/plugins/item-actions/types.js';

const SERVER_IMAGE = 'ghcr.io/cairn-backup/cairn:dev';

function fakeKube(opts: { configMaps?: { name: string; data: Record<string, string> }[]; deploymentImage?: string } = {}) {
  const asked: string[] = [];
  const kube = {
    apps: {
      readNamespacedDeployment: async (a: { name: string; namespace: string }) => {
        asked.push(`deployment ${a.namespace}/${a.name}`);
        if (!opts.deploymentImage) throw Object.assign(new Error('not found'), { code: 404 });
        return { spec: { template: { spec: { containers: [{ name: 'cairn', image: opts.deploymentImage }] } } } };
      },
    },
    core: {
      listNamespacedConfigMap: async (a: { namespace: string; labelSelector: string }) => {
        asked.push(`configmaps ${a.namespace} ${a.labelSelector}`);
        return { items: (opts.configMaps ?? []).map((c) => ({ metadata: { name: c.name }, data: c.data })) };
      },
    },
  } as unknown as Kube;
  return { kube, asked };
}

function restore(spec: Partial<Restore['spec']> = {}): Restore {
  const r = newRestore({ namespace: 'cairn-ns', name: 'r1', spec: { backupName: 'b1', ...spec } });
  r.metadata.uid = 'restore-uid';
  return r;
}

const pvbs: PodVolumeBackup[] = ['data', 'scratch'].map((volume) => {
  const b = newPodVolumeBackup({
    namespace: 'cairn-ns',
    name: `b1-${volume}`,
    spec: { node: 'n1', pod: { kind: 'Pod', namespace: 'app', name: 'web-0', uid: 'old' }, volume, backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia' },
  });
  b.status = { phase: 'Completed', snapshotID: `snap-${volume}` };
  return b;
});

const pod = (extra: Record<string, unknown> = {}): UnstructuredObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'app' },
  spec: {
    initContainers: [{ name: 'restore-wait', image: 'stale' }, { name: 'init', image: 'busybox' }],
    containers: [{ name: 'app', image: 'busybox', ...extra }],
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'scratch', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'c' } },
    ],
  },
});

async function run(item: UnstructuredObject, o: { kube: Kube; restore?: Restore; podVolumeBackups?: PodVolumeBackup[] }) {
  const res = await podVolumeRestoreAction.execute(item, {
    restore: o.restore ?? restore(),
    backup: newBackup({ namespace: 'cairn-ns', name: 'b1' }),
    kube: o.kube,
    log: createLogger({ level: 'silent' as 'info' }),
    itemFromBackup: item,
    ...(o.podVolumeBackups ? { podVolumeBackups: o.podVolumeBackups } : {}),
  });
  return res.item as UnstructuredObject & { spec: { initContainers?: Record<string, unknown>[] } };
}

describe('velero.io/pod-volume-restore restore item action', () => {
  it('applies to pods', () => {
    expect(podVolumeRestoreAction.appliesTo()).toEqual({ includedResources: ['pods'] });
  });

  it('prepends restore-wait for the fs-backup volumes, image from the cairn Deployment, old one removed', async () => {
    const { kube, asked } = fakeKube({ deploymentImage: SERVER_IMAGE });
    const out = await run(pod(), { kube, podVolumeBackups: pvbs });
    expect(out.spec.initContainers?.map((c) => c.name)).toEqual(['restore-wait', 'init']);
    const helper = out.spec.initContainers?.[0];
    expect(helper).toMatchObject({
      image: SERVER_IMAGE,
      command: ['/cairn'],
      args: ['restore-helper', 'restore-uid'],
      volumeMounts: [
        { name: 'data', mountPath: '/restores/data' },
        { name: 'scratch', mountPath: '/restores/scratch' },
      ],
      securityContext: { runAsUser: 1000, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
    });
    expect(asked).toEqual(['deployment cairn-ns/cairn', 'configmaps cairn-ns velero.io/plugin-config,velero.io/pod-volume-restore=RestoreItemAction']);
  });

  it('uses the plugin ConfigMap and copies the first container’s security context when the ConfigMap sets none', async () => {
    const { kube } = fakeKube({ deploymentImage: SERVER_IMAGE, configMaps: [{ name: 'fs-restore-action-config', data: { image: 'registry.example/helper', cpuLimit: '250m' } }] });
    const out = await run(pod({ securityContext: { runAsUser: 4242 } }), { kube, podVolumeBackups: pvbs });
    expect(out.spec.initContainers?.[0]).toMatchObject({
      image: 'registry.example/helper:dev',
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '250m', memory: '128Mi' } },
      securityContext: { runAsUser: 4242 },
    });
  });

  it('no matching PVBs (or none at all): only removes old restore-wait containers, reads nothing', async () => {
    const { kube, asked } = fakeKube();
    const other = { ...pod(), metadata: { name: 'other', namespace: 'app' } };
    expect((await run(other, { kube, podVolumeBackups: pvbs })).spec.initContainers?.map((c) => c.name)).toEqual(['init']);
    expect((await run(pod(), { kube })).spec.initContainers?.map((c) => c.name)).toEqual(['init']);
    expect(asked).toEqual([]);
  });

  it('a restore that excludes PVCs or PVs gets no init container (no PVRs would come)', async () => {
    const { kube } = fakeKube({ deploymentImage: SERVER_IMAGE });
    const out = await run(pod(), { kube, podVolumeBackups: pvbs, restore: restore({ excludedResources: ['persistentvolumes'] }) });
    expect(out.spec.initContainers?.map((c) => c.name)).toEqual(['init']);
  });

  it('without the cairn Deployment the release image of this version is used', async () => {
    const { kube } = fakeKube();
    const out = await run(pod(), { kube, podVolumeBackups: pvbs });
    expect(String(out.spec.initContainers?.[0]?.image)).toMatch(/^ghcr\.io\/cairn-backup\/cairn:v/);
  });
});
