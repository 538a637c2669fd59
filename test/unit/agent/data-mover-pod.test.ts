import { describe, expect, it } from 'vitest';
import { dataMoverPod } from '../../../src/agent/exposer/data-mover-pod.js';
import { hostingPod, hostingPodLabel } from '../../../src/agent/exposer/hosting-pod.js';
import { hostingPodInput, nodeAgentPod } from './node-agent-pod.js';

const nodeAgent = nodeAgentPod({ env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] }, { imagePullSecrets: [{ name: 'pull' }] });

const base = {
  owner: { name: 'b1-x7k2p', namespace: 'velero', uid: 'du-uid' },
  claimName: 'b1-x7k2p',
  nodeName: 'node-2',
  nodeAgentPod: nodeAgent,
  resourceTimeoutMs: 600_000,
  logLevel: 'info',
  config: { podResources: { cpuRequest: '100m' } },
};

describe('data-mover pod of a DataUpload/DataDownload', () => {
  const pod = dataMoverPod({ ...base, kind: 'DataUpload', volumeMode: 'Filesystem' });

  it('is named, labelled and owned after its DataUpload (velero.io/v2alpha1)', () => {
    expect(pod.metadata).toEqual({
      name: 'b1-x7k2p',
      namespace: 'velero',
      labels: { 'velero.io/data-upload': 'b1-x7k2p' },
      ownerReferences: [{ apiVersion: 'velero.io/v2alpha1', kind: 'DataUpload', name: 'b1-x7k2p', uid: 'du-uid', controller: true }],
    });
  });

  it('is placed by a required node affinity on the claiming node, not by nodeName, so the scheduler provisions its claim', () => {
    expect(pod.spec?.nodeName).toBeUndefined();
    expect(pod.spec?.affinity).toEqual({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] }] } },
    });
    expect(pod.spec).toMatchObject({ restartPolicy: 'Never', serviceAccountName: 'cairn-node-agent', imagePullSecrets: [{ name: 'pull' }], securityContext: { runAsUser: 0 } });
  });

  it('a DataDownload on its workload\'s node is placed there by nodeName, past the scheduler and its taints, as Velero places it', () => {
    const pinned = dataMoverPod({ ...base, kind: 'DataDownload', volumeMode: 'Filesystem', pinned: true });
    expect(pinned.spec?.nodeName).toBe('node-2');
    expect(pinned.spec?.affinity).toBeUndefined();
  });

  it('runs `cairn data-mover backup` in one container named after the UID, with the node-agent image, env and resources', () => {
    const c = pod.spec!.containers[0]!;
    expect(pod.spec?.containers).toHaveLength(1);
    expect(c.name).toBe('du-uid');
    expect(c.image).toBe('ghcr.io/cairn-backup/cairn:v1');
    expect(c.args).toEqual(['data-mover', 'backup', '--volume-path=/du-uid', '--volume-mode=Filesystem', '--data-upload=b1-x7k2p', '--resource-timeout=10m0s', '--log-format=json', '--log-level=info', '--progress-interval=2s', '--cache-dir=/listing-cache']);
    expect(c.env).toEqual(nodeAgent.spec!.containers[0]!.env);
    expect(c.resources).toEqual({ requests: { cpu: '100m' } });
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['DAC_READ_SEARCH'] } });
  });

  it('mounts the exposed PVC at /<uid> next to the inherited volumes and the node\'s listing caches, never the service-account token nor the kubelet\'s pods directory', () => {
    expect(pod.spec?.volumes).toEqual([
      { name: 'du-uid', persistentVolumeClaim: { claimName: 'b1-x7k2p' } },
      { name: 'cloud-credentials', secret: { secretName: 'cloud-credentials' } },
      { name: 'listing-cache', hostPath: { path: '/var/lib/cairn/listing-cache', type: 'DirectoryOrCreate' } },
    ]);
    expect(pod.spec?.containers[0]?.volumeMounts).toEqual([
      { name: 'du-uid', mountPath: '/du-uid', readOnly: true },
      { name: 'cloud-credentials', mountPath: '/credentials', readOnly: true },
      { name: 'listing-cache', mountPath: '/listing-cache' },
    ]);
    expect(pod.spec?.containers[0]?.volumeDevices).toBeUndefined();
  });

  it('for a Block DataDownload runs `data-mover restore` with the volume attached as a device at /<uid>', () => {
    const r = dataMoverPod({ ...base, owner: { name: 'r1-abc', namespace: 'velero', uid: 'dd-uid' }, claimName: 'r1-abc', kind: 'DataDownload', volumeMode: 'Block' });
    const c = r.spec!.containers[0]!;
    expect(r.metadata?.labels).toEqual({ 'velero.io/data-download': 'r1-abc' });
    expect(r.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'DataDownload', apiVersion: 'velero.io/v2alpha1' });
    expect(c.args?.slice(0, 5)).toEqual(['data-mover', 'restore', '--volume-path=/dd-uid', '--volume-mode=Block', '--data-download=r1-abc']);
    expect(c.volumeDevices).toEqual([{ name: 'dd-uid', devicePath: '/dd-uid' }]);
    expect(c.volumeMounts?.map((m) => m.name)).toEqual(['cloud-credentials']);
    // A Block DataUpload has no listings to cache either.
    const up = dataMoverPod({ ...base, kind: 'DataUpload', volumeMode: 'Block' });
    expect(up.spec?.volumes?.map((v) => v.name)).toEqual(['du-uid', 'cloud-credentials']);
    expect(up.spec?.containers[0]?.args?.some((a) => a.startsWith('--cache-dir'))).toBe(false);
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'] } });
  });

  it('passes the ConfigMap\'s upload cap to backups only: a restore does not write to the store', () => {
    const config = { uploadBytesPerSecond: 1048576 };
    const up = dataMoverPod({ ...base, config, kind: 'DataUpload', volumeMode: 'Block' });
    expect(up.spec?.containers[0]?.args?.at(-1)).toBe('--upload-bytes-per-second=1048576');
    const down = dataMoverPod({ ...base, config, kind: 'DataDownload', volumeMode: 'Block' });
    expect(down.spec?.containers[0]?.args?.some((a) => a.startsWith('--upload-bytes-per-second'))).toBe(false);
    const pvb = hostingPod(hostingPodInput(nodeAgent, { kind: 'PodVolumeBackup', owner: base.owner, config }));
    expect(pvb.spec?.containers[0]?.args).toContain('--upload-bytes-per-second=1048576');
    const pvr = hostingPod(hostingPodInput(nodeAgent, { kind: 'PodVolumeRestore', owner: base.owner, config }));
    expect(pvr.spec?.containers[0]?.args?.some((a) => a.startsWith('--upload-bytes-per-second'))).toBe(false);
  });

  it('passes the ConfigMap\'s store retry budget to every data mover, backups and restores alike', () => {
    const config = { storeRetryTimeout: '10m' };
    for (const kind of ['DataUpload', 'DataDownload'] as const) {
      expect(dataMoverPod({ ...base, config, kind, volumeMode: 'Block' }).spec?.containers[0]?.args).toContain('--store-retry-timeout=10m');
    }
    for (const kind of ['PodVolumeBackup', 'PodVolumeRestore'] as const) {
      const pod = hostingPod(hostingPodInput(nodeAgent, { kind, owner: base.owner, config }));
      expect(pod.spec?.containers[0]?.args).toContain('--store-retry-timeout=10m');
    }
    const unset = hostingPod(hostingPodInput(nodeAgent, { kind: 'PodVolumeBackup', owner: base.owner }));
    expect(unset.spec?.containers[0]?.args?.some((a) => a.startsWith('--store-retry-timeout'))).toBe(false);
  });

  it('marks a read-only backup PVC read-only in the pod, and gives the pod SELinux type spc_t when asked (backupPVC)', () => {
    const ro = dataMoverPod({ ...base, kind: 'DataUpload', volumeMode: 'Filesystem', readOnlyClaim: true, seLinuxType: 'spc_t' });
    expect(ro.spec?.volumes?.find((v) => v.name === 'du-uid')?.persistentVolumeClaim).toEqual({ claimName: 'b1-x7k2p', readOnly: true });
    expect(ro.spec?.securityContext).toMatchObject({ runAsUser: 0, seLinuxOptions: { type: 'spc_t' } });
    expect(pod.spec?.volumes?.find((v) => v.name === 'du-uid')?.persistentVolumeClaim).toEqual({ claimName: 'b1-x7k2p' });
    expect(pod.spec?.securityContext?.seLinuxOptions).toBeUndefined();
  });

  it("takes Velero's list of cloud identity labels, annotations and node pool tolerations from the node agent, and nothing else", () => {
    const agent = nodeAgentPod({}, {
      tolerations: [
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
        { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'kubernetes.azure.com/scalesetpriority', operator: 'Equal', value: 'spot', effect: 'NoSchedule' },
        { key: 'CriticalAddonsOnly', operator: 'Equal', value: 'second', effect: 'NoSchedule' },
      ],
    });
    agent.metadata = { ...agent.metadata, labels: { 'azure.workload.identity/use': 'true', name: 'node-agent' }, annotations: { 'iam.amazonaws.com/role': 'backup-role', 'prometheus.io/scrape': 'true' } };
    const pods = [
      dataMoverPod({ ...base, nodeAgentPod: agent, kind: 'DataDownload', volumeMode: 'Filesystem' }),
      hostingPod(hostingPodInput(agent, { kind: 'PodVolumeBackup', owner: { name: 'b1-pvb', namespace: 'velero', uid: 'pvb-uid' } })),
    ];
    for (const p of pods) {
      expect(p.metadata?.labels?.['azure.workload.identity/use']).toBe('true');
      expect(p.metadata?.labels?.name).toBeUndefined();
      expect(p.metadata?.annotations).toEqual({ 'iam.amazonaws.com/role': 'backup-role' });
      // One per key, the node agent's first, in Velero's order.
      expect(p.spec?.tolerations).toEqual([
        { key: 'kubernetes.azure.com/scalesetpriority', operator: 'Equal', value: 'spot', effect: 'NoSchedule' },
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
      ]);
    }
    expect(pods[0]?.metadata?.labels?.['velero.io/data-download']).toBe('b1-x7k2p');
    // A node agent without them passes nothing on.
    expect(pod.metadata?.annotations).toBeUndefined();
    expect(pod.spec?.tolerations).toBeUndefined();
  });

  it("the ConfigMap's podLabels and podAnnotations go on every data-mover pod instead of the node agent's cloud ones; tolerations stay", () => {
    const agent = nodeAgentPod({}, { tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }] });
    agent.metadata = { ...agent.metadata, labels: { 'azure.workload.identity/use': 'true' }, annotations: { 'iam.amazonaws.com/role': 'backup-role' } };
    const config = { podLabels: { team: 'storage', 'example.com/cost-center': 'c42' }, podAnnotations: { 'sidecar.istio.io/inject': 'false' } };
    const pods = [
      dataMoverPod({ ...base, config, nodeAgentPod: agent, kind: 'DataUpload', volumeMode: 'Filesystem' }),
      hostingPod(hostingPodInput(agent, { kind: 'PodVolumeRestore', owner: { name: 'r1-pvr', namespace: 'velero', uid: 'pvr-uid' }, config })),
    ];
    expect(pods[0]?.metadata?.labels).toEqual({ team: 'storage', 'example.com/cost-center': 'c42', 'velero.io/data-upload': 'b1-x7k2p' });
    expect(pods[1]?.metadata?.labels).toEqual({ team: 'storage', 'example.com/cost-center': 'c42', 'velero.io/pod-volume-restore': 'r1-pvr' });
    for (const p of pods) {
      expect(p.metadata?.annotations).toEqual({ 'sidecar.istio.io/inject': 'false' });
      expect(p.spec?.tolerations).toEqual([{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
    }
    // Only labels set: the node agent's annotation is still passed on.
    const labelsOnly = dataMoverPod({ ...base, config: { podLabels: { team: 'storage' } }, nodeAgentPod: agent, kind: 'DataUpload', volumeMode: 'Filesystem' });
    expect(labelsOnly.metadata?.labels).toEqual({ team: 'storage', 'velero.io/data-upload': 'b1-x7k2p' });
    expect(labelsOnly.metadata?.annotations).toEqual({ 'iam.amazonaws.com/role': 'backup-role' });
  });

  it('labels pods of every kind with the key the node-agent maps back to the CR', () => {
    expect(['PodVolumeBackup', 'PodVolumeRestore', 'DataUpload', 'DataDownload'].map((k) => hostingPodLabel(k as Parameters<typeof hostingPodLabel>[0]))).toEqual([
      'velero.io/pod-volume-backup',
      'velero.io/pod-volume-restore',
      'velero.io/data-upload',
      'velero.io/data-download',
    ]);
  });
});
