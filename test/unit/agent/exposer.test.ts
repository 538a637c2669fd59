import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { HostPathError, findVolumePath, hostPodsHostDir, toHostPath, volumeDirectory } from '../../../src/agent/exposer/host-path.js';
import { hostingPod, unrecoverableReason } from '../../../src/agent/exposer/hosting-pod.js';
import type { NodeAgentConfig } from '../../../src/agent/config.js';
import { hostingPodInput, nodeAgentPod } from './node-agent-pod.js';

const workload: V1Pod = {
  metadata: { namespace: 'app', name: 'web', uid: 'pod-uid' },
  spec: {
    containers: [],
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: 'web-data' } },
      { name: 'scratch', emptyDir: {} },
      { name: 'inline', csi: { driver: 'x' } },
    ],
  },
};

const nodeAgent = nodeAgentPod({
  imagePullPolicy: 'IfNotPresent',
  command: ['/cairn'],
  args: ['node-agent', 'server'],
  env: [{ name: 'CAIRN_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }, { name: 'AWS_SHARED_CREDENTIALS_FILE', value: '/credentials/cloud' }],
  ports: [{ name: 'health', containerPort: 8086 }],
  readinessProbe: { httpGet: { path: '/readyz', port: 'health' } },
});

describe('host path of a pod volume', () => {
  it('is the bound PV for a claim (CSI: its mount dir), else the volume name', async () => {
    const getPersistentVolume = async () => ({ pvName: 'pvc-123', pv: { spec: { csi: { driver: 'd', volumeHandle: 'h' } } } });
    expect(await volumeDirectory({ pod: workload, volumeName: 'data', getPersistentVolume })).toEqual({ dir: 'pvc-123', csiMount: true });
    expect(await volumeDirectory({ pod: workload, volumeName: 'data', getPersistentVolume: async () => ({ pvName: 'pv-local', pv: { spec: {} } }) })).toEqual({ dir: 'pv-local', csiMount: false });
    expect(await volumeDirectory({ pod: workload, volumeName: 'scratch', getPersistentVolume })).toEqual({ dir: 'scratch', csiMount: false });
    expect(await volumeDirectory({ pod: workload, volumeName: 'inline', getPersistentVolume })).toEqual({ dir: 'inline', csiMount: true });
    await expect(volumeDirectory({ pod: workload, volumeName: 'nope', getPersistentVolume })).rejects.toThrow('volume nope is not in pod app/web');
    await expect(volumeDirectory({ pod: workload, volumeName: 'data', getPersistentVolume: async () => ({ pvName: '' }) })).rejects.toThrow('claim web-data of volume data is not bound');
    await expect(volumeDirectory({ pod: workload, volumeName: 'data', getPersistentVolume: async () => ({ pvName: 'b', pv: { spec: { volumeMode: 'Block' } } }) })).rejects.toThrow(/block volume/);
  });

  it('is found in exactly one plugin directory under /host_pods/<uid>/volumes; CSI data is in mount', () => {
    const tree: Record<string, string[]> = { '/host_pods/pod-uid/volumes': ['kubernetes.io~empty-dir', 'kubernetes.io~csi', 'kubernetes.io~projected'] };
    const present = new Set(['/host_pods/pod-uid/volumes/kubernetes.io~empty-dir/scratch', '/host_pods/pod-uid/volumes/kubernetes.io~csi/pvc-123']);
    const fs = { readDir: (p: string) => { if (!tree[p]) throw Object.assign(new Error('nope'), { code: 'ENOENT' }); return tree[p]; }, exists: (p: string) => present.has(p) };
    expect(findVolumePath({ hostPodsDir: '/host_pods', podUID: 'pod-uid', volume: { dir: 'scratch', csiMount: false }, ...fs })).toBe('/host_pods/pod-uid/volumes/kubernetes.io~empty-dir/scratch');
    // The local test bed mounts claims of any PV under the CSI plugin directory: the plugin decides.
    expect(findVolumePath({ hostPodsDir: '/host_pods', podUID: 'pod-uid', volume: { dir: 'pvc-123', csiMount: false }, ...fs })).toBe('/host_pods/pod-uid/volumes/kubernetes.io~csi/pvc-123/mount');
    expect(() => findVolumePath({ hostPodsDir: '/host_pods', podUID: 'pod-uid', volume: { dir: 'gone', csiMount: false }, ...fs })).toThrow('volume directory gone not found under /host_pods/pod-uid/volumes');
    expect(() => findVolumePath({ hostPodsDir: '/host_pods', podUID: 'other', volume: { dir: 'scratch', csiMount: false }, ...fs })).toThrow(/no volumes of pod other on this node/);
    present.add('/host_pods/pod-uid/volumes/kubernetes.io~projected/scratch');
    expect(() => findVolumePath({ hostPodsDir: '/host_pods', podUID: 'pod-uid', volume: { dir: 'scratch', csiMount: false }, ...fs })).toThrow(/found more than once/);
  });

  it('maps /host_pods to the host directory of the node-agent\'s host-pods volume', () => {
    expect(hostPodsHostDir(nodeAgent)).toBe('/var/lib/kubelet/pods');
    expect(toHostPath('/host_pods/u/volumes/x/y', { hostPodsDir: '/host_pods', hostPodsHostDir: '/var/lib/kubelet/pods' })).toBe('/var/lib/kubelet/pods/u/volumes/x/y');
    expect(toHostPath('/host_pods/u', { hostPodsDir: '/host_pods/', hostPodsHostDir: '/data/kubelet/pods/' })).toBe('/data/kubelet/pods/u');
    expect(() => toHostPath('/elsewhere/u', { hostPodsDir: '/host_pods', hostPodsHostDir: '/var/lib/kubelet/pods' })).toThrow(HostPathError);
    expect(() => hostPodsHostDir({ spec: { containers: [], volumes: [] } })).toThrow(/host-pods/);
  });
});

describe('data-mover pod', () => {
  const pod = hostingPod({
    kind: 'PodVolumeBackup',
    owner: { name: 'b1-x7k2p', namespace: 'velero', uid: 'pvb-uid' },
    nodeName: 'node-1',
    hostPath: '/var/lib/kubelet/pods/pod-uid/volumes/kubernetes.io~empty-dir/scratch',
    nodeAgentPod: nodeAgent,
    resourceTimeoutMs: 600_000,
    logLevel: 'info',
    config: { podResources: { cpuRequest: '100m', memoryLimit: '1Gi' }, priorityClassName: 'data-movers' },
  });

  it('is named, labelled and owned after its PVB, pinned to the node, never restarted, root', () => {
    expect(pod.metadata).toEqual({
      name: 'b1-x7k2p',
      namespace: 'velero',
      labels: { 'velero.io/pod-volume-backup': 'b1-x7k2p' },
      ownerReferences: [{ apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', name: 'b1-x7k2p', uid: 'pvb-uid', controller: true }],
    });
    expect(pod.spec).toMatchObject({
      nodeName: 'node-1',
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 10,
      securityContext: { runAsUser: 0 },
      serviceAccountName: 'cairn-node-agent',
      priorityClassName: 'data-movers',
    });
  });

  it('runs `cairn pod-volume backup` in one container named after the PVB UID, with the node-agent image, env and resources from the ConfigMap', () => {
    expect(pod.spec?.containers).toHaveLength(1);
    const c = pod.spec!.containers[0]!;
    expect(c.name).toBe('pvb-uid');
    expect(c.image).toBe('ghcr.io/cairn-backup/cairn:v1');
    expect(c.command).toEqual(['/cairn']);
    expect(c.args).toEqual(['pod-volume', 'backup', '--volume-path=/pvb-uid', '--pod-volume-backup=b1-x7k2p', '--resource-timeout=10m0s', '--log-format=json', '--log-level=info', '--progress-interval=2s', '--cache-dir=/listing-cache']);
    expect(c.env).toEqual(nodeAgent.spec!.containers[0]!.env);
    expect(c.resources).toEqual({ requests: { cpu: '100m' }, limits: { memory: '1Gi' } });
    expect(c.ports).toBeUndefined();
    expect(c.readinessProbe).toBeUndefined();
  });

  it('mounts the volume\'s host path at /<uid> plus the node-agent\'s volumes and the node\'s listing caches, but neither its service-account token nor the kubelet\'s whole pods directory', () => {
    expect(pod.spec?.volumes).toEqual([
      { name: 'pvb-uid', hostPath: { path: '/var/lib/kubelet/pods/pod-uid/volumes/kubernetes.io~empty-dir/scratch' } },
      { name: 'cloud-credentials', secret: { secretName: 'cloud-credentials' } },
      { name: 'listing-cache', hostPath: { path: '/var/lib/cairn/listing-cache', type: 'DirectoryOrCreate' } },
    ]);
    expect(pod.spec?.containers[0]?.volumeMounts).toEqual([
      { name: 'pvb-uid', mountPath: '/pvb-uid', mountPropagation: 'HostToContainer', readOnly: true },
      { name: 'cloud-credentials', mountPath: '/credentials', readOnly: true },
      { name: 'listing-cache', mountPath: '/listing-cache' },
    ]);
  });

  it('keeps the listing caches where the ConfigMap says, or none; a restore has none', () => {
    const input = (config: NodeAgentConfig, kind: 'PodVolumeBackup' | 'PodVolumeRestore' = 'PodVolumeBackup') =>
      hostingPod(hostingPodInput(nodeAgent, { kind, owner: { name: 'b1-abc', namespace: 'velero', uid: 'pvb-uid' }, config }));
    const elsewhere = input({ listingCacheDir: '/mnt/fast/cairn' });
    expect(elsewhere.spec?.volumes?.at(-1)).toEqual({ name: 'listing-cache', hostPath: { path: '/mnt/fast/cairn', type: 'DirectoryOrCreate' } });
    for (const none of [input({ listingCacheDir: '' }), input({}, 'PodVolumeRestore')]) {
      expect(none.spec?.volumes?.map((v) => v.name)).not.toContain('listing-cache');
      expect(none.spec?.containers[0]?.volumeMounts?.map((m) => m.name)).not.toContain('listing-cache');
      expect(none.spec?.containers[0]?.args?.some((a) => a.startsWith('--cache-dir'))).toBe(false);
    }
  });

  it('runs as root on the runtime\'s default seccomp profile, holding only DAC_READ_SEARCH to read the volume', () => {
    expect(pod.spec?.securityContext).toEqual({ runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.spec?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['DAC_READ_SEARCH'] } });
  });

  it('for a PVR runs `pod-volume restore` and is labelled with the PVR', () => {
    const r = hostingPod(hostingPodInput(nodeAgent, { kind: 'PodVolumeRestore', owner: { name: 'r1-abc', namespace: 'velero', uid: 'pvr-uid' }, logLevel: 'debug', config: { privilegedFsBackup: true } }));
    expect(r.metadata?.labels).toEqual({ 'velero.io/pod-volume-restore': 'r1-abc' });
    expect(r.spec?.containers[0]?.args).toEqual(['pod-volume', 'restore', '--volume-path=/pvr-uid', '--pod-volume-restore=r1-abc', '--resource-timeout=1m0s', '--log-format=json', '--log-level=debug', '--progress-interval=2s']);
    expect(r.spec?.containers[0]?.securityContext).toEqual({ privileged: true, readOnlyRootFilesystem: true });
    expect(r.spec?.priorityClassName).toBeUndefined();
  });

  it('a PVR holds what writing files back with their owners, modes and times takes, and is privileged only with privilegedFsBackup', () => {
    const r = hostingPod(hostingPodInput(nodeAgent, { kind: 'PodVolumeRestore', owner: { name: 'r1-abc', namespace: 'velero', uid: 'pvr-uid' } }));
    expect(r.spec?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'] } });
    // It writes the volume: mounted read-write (a backup's is read-only).
    expect(r.spec?.containers[0]?.volumeMounts?.[0]).toEqual({ name: 'pvr-uid', mountPath: '/pvr-uid', mountPropagation: 'HostToContainer' });
    const b = hostingPod(hostingPodInput(nodeAgent, { kind: 'PodVolumeBackup', owner: { name: 'b1-abc', namespace: 'velero', uid: 'pvb-uid' }, config: { privilegedFsBackup: true } }));
    expect(b.spec?.containers[0]?.securityContext).toEqual({ privileged: true, readOnlyRootFilesystem: true });
  });

  it('is unrecoverable when Failed or stuck pulling its image, not while it starts', () => {
    expect(unrecoverableReason({ status: { phase: 'Pending' } })).toBeUndefined();
    expect(unrecoverableReason({ status: { phase: 'Running' } })).toBeUndefined();
    expect(unrecoverableReason({ status: { phase: 'Failed', message: 'evicted' } })).toBe('pod is Failed: evicted');
    expect(unrecoverableReason({ status: { phase: 'Pending', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } } }] } })).toBe('container c is waiting: ErrImagePull');
    expect(unrecoverableReason({ status: { phase: 'Pending', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] } })).toBeUndefined();
  });
});
