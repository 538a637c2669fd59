/**
 * The pods the node-agent starts to run a data mover (docs/node-agent.md), as pure functions: name = CR name,
 * owned by the CR, labelled with it, one container named after the CR's UID running `/cairn <command>`, root, never
 * restarted. Everything that configures the node-agent (env, credentials volumes, service account, image, DNS, pull
 * secrets, priority class, pod resources, Velero's list of cloud identity labels, annotations and node pool
 * tolerations) is inherited by `dataMoverPodShell`, so every data mover reaches the same storage the same way; the
 * callers add only the volume and where the pod runs:
 *  - `hostingPod`: fs-backup (PVB/PVR), pinned by nodeName, the workload volume's host path mounted;
 *  - data-mover-pod.ts: snapshot data movement (DU/DD), the exposed PVC mounted or attached as a block device.
 */
import type { V1Container, V1Pod, V1PodSpec, V1SecurityContext, V1Toleration, V1Volume, V1VolumeDevice, V1VolumeMount } from '@kubernetes/client-node';
import { ApiVersionV1, ApiVersionV2Alpha1, Labels } from '../../api/constants.js';
import { formatDuration } from '../../api/duration.js';
import { hostingPodResources, listingCacheHostDir, type NodeAgentConfig } from '../config.js';
import { HOST_PODS_VOLUME } from './host-path.js';

export type DataPathKind = 'PodVolumeBackup' | 'PodVolumeRestore' | 'DataUpload' | 'DataDownload';

export interface HostingPodInput {
  kind: 'PodVolumeBackup' | 'PodVolumeRestore';
  /** The PVB/PVR: name, uid (namespace = install namespace). */
  owner: { name: string; namespace: string; uid: string };
  nodeName: string;
  /** The volume's directory on the node. */
  hostPath: string;
  nodeAgentPod: V1Pod;
  resourceTimeoutMs: number;
  logLevel: string;
  config: NodeAgentConfig;
}

export const NODE_AGENT_CONTAINER = 'node-agent';
/** How often the data mover records progress (an Event update, then a CR status write). */
export const PROGRESS_INTERVAL_MS = 2000;

/**
 * Not inherited from the node-agent pod: auto-mounted service-account token volumes belong to the pod they were
 * injected into (the new pod gets its own), and the kubelet's whole pods directory, which the node agent reads to find
 * a volume: a data mover reaches only the one volume it was made for.
 */
const notInherited = (name: string) => name.startsWith('kube-api-access-') || name === HOST_PODS_VOLUME || name === LISTING_CACHE_VOLUME;

/**
 * What a data mover may do beyond root's ownership (docs/security.md): a backup reads every file of its volume,
 * whatever its owner and mode (DAC_READ_SEARCH); a restore writes files back with their owners, modes and times
 * (CHOWN; DAC_OVERRIDE to write into directories it restored read-only or to another owner; FOWNER to set the modes
 * and times of files it no longer owns; FSETID to keep set-group-ID bits). Every other capability is dropped.
 */
export const DATA_MOVER_CAPABILITIES = {
  backup: ['DAC_READ_SEARCH'],
  restore: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'],
} as const;

/** Whether the data mover of this kind backs a volume up or restores it. */
export function dataPathDirection(kind: DataPathKind): 'backup' | 'restore' {
  return kind === 'PodVolumeBackup' || kind === 'DataUpload' ? 'backup' : 'restore';
}

export function dataMoverContainerSecurity(kind: DataPathKind, privileged: boolean): V1SecurityContext {
  // A privileged container has every capability; Kubernetes refuses allowPrivilegeEscalation=false beside it.
  // The root filesystem is read-only: a data mover writes only into its volume and the /tmp and /scratch emptyDirs
  // it inherits from the node agent.
  if (privileged) return { privileged: true, readOnlyRootFilesystem: true };
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: [...DATA_MOVER_CAPABILITIES[dataPathDirection(kind)]] } };
}

export function nodeAgentContainer(pod: V1Pod): V1Container {
  const containers = pod.spec?.containers ?? [];
  const c = containers.find((x) => x.name === NODE_AGENT_CONTAINER) ?? containers[0];
  if (!c) throw new Error('the node-agent pod has no container');
  return c;
}

/** The label on a data-mover pod that names its CR (`velero.io/pod-volume-backup=<name>`, `velero.io/data-upload=<name>`...). */
export function hostingPodLabel(kind: DataPathKind): string {
  switch (kind) {
    case 'PodVolumeBackup':
      return Labels.PodVolumeBackup;
    case 'PodVolumeRestore':
      return Labels.PodVolumeRestore;
    case 'DataUpload':
      return Labels.DataUpload;
    case 'DataDownload':
      return Labels.DataDownload;
  }
}

const apiVersionOf = (kind: DataPathKind) => (kind === 'DataUpload' || kind === 'DataDownload' ? ApiVersionV2Alpha1 : ApiVersionV1);

/** The command a data mover of each kind runs (`cairn <command> backup|restore`) and the flag naming its object. */
const DATA_MOVER_COMMANDS: Record<DataPathKind, { command: string; objectFlag: string }> = {
  PodVolumeBackup: { command: 'pod-volume', objectFlag: '--pod-volume-backup' },
  PodVolumeRestore: { command: 'pod-volume', objectFlag: '--pod-volume-restore' },
  DataUpload: { command: 'data-mover', objectFlag: '--data-upload' },
  DataDownload: { command: 'data-mover', objectFlag: '--data-download' },
};

/**
 * The arguments of `/cairn` in a data-mover pod: the command and its volume, the kind's own flags, the object carried
 * out, then what every data mover takes: timeouts, logging, progress, and the node-agent ConfigMap's store settings.
 */
function dataMoverArgs(input: DataMoverPodShellInput): string[] {
  const { config, owner } = input;
  const { command, objectFlag } = DATA_MOVER_COMMANDS[input.kind];
  const verb = dataPathDirection(input.kind);
  return [
    command,
    verb,
    `--volume-path=${volumePathOf(owner.uid)}`,
    ...(input.kindArgs ?? []),
    `${objectFlag}=${owner.name}`,
    `--resource-timeout=${formatDuration(input.resourceTimeoutMs)}`,
    // JSON whatever the node-agent's own format: the node-agent re-emits these lines, field by field, in its log.
    '--log-format=json',
    `--log-level=${input.logLevel}`,
    // Velero's data mover reports progress every 10 s; live progress in `describe` wants it more often.
    `--progress-interval=${formatDuration(PROGRESS_INTERVAL_MS)}`,
    // The retry budget applies to every data mover (restores read through outages too).
    ...(config.storeRetryTimeout ? [`--store-retry-timeout=${config.storeRetryTimeout}`] : []),
    // The upload cap only to backups: restores only read from the store.
    ...(verb === 'backup' && config.uploadBytesPerSecond ? [`--upload-bytes-per-second=${config.uploadBytesPerSecond}`] : []),
  ];
}

export interface DataMoverPodShellInput {
  kind: DataPathKind;
  owner: { name: string; namespace: string; uid: string };
  nodeAgentPod: V1Pod;
  config: NodeAgentConfig;
  resourceTimeoutMs: number;
  logLevel: string;
  /** Flags of the kind's command besides those every data mover takes (`--volume-mode`). */
  kindArgs?: string[];
  /** The volume the data mover works on (named after the owner's UID); mounted or attached at /<uid>. */
  volume: V1Volume;
  attach: { mount: Omit<V1VolumeMount, 'name' | 'mountPath'> } | { device: Omit<V1VolumeDevice, 'name' | 'devicePath'> };
  /** Where the pod runs: nodeName (fs-backup) or a required node affinity (snapshot data movement). */
  placement: Pick<V1PodSpec, 'nodeName' | 'affinity'>;
  privileged?: boolean;
  /** SELinux type for the pod (the node agent's `backupPVC` `spcNoRelabeling`). */
  seLinuxType?: string;
}

/** How long a deleted data-mover pod has to stop cleanly (its lock released) before it is killed. */
export const DATA_MOVER_GRACE_SECONDS = 10;

/** The volume and the path of the node's listing-cache directory in a backup pod. */
export const LISTING_CACHE_VOLUME = 'listing-cache';
export const LISTING_CACHE_MOUNT = '/listing-cache';

/**
 * The listing cache of a backup of a mounted volume (listing-cache.ts): kept in a node directory, so that the next
 * backup of the same volume on this node walks only what changed. A restore or a block device has none.
 */
function listingCache(input: DataMoverPodShellInput): { volume: V1Volume; mount: V1VolumeMount; arg: string } | undefined {
  const dir = listingCacheHostDir(input.config);
  if (dataPathDirection(input.kind) !== 'backup' || !dir || !('mount' in input.attach)) return undefined;
  return {
    volume: { name: LISTING_CACHE_VOLUME, hostPath: { path: dir, type: 'DirectoryOrCreate' } },
    mount: { name: LISTING_CACHE_VOLUME, mountPath: LISTING_CACHE_MOUNT },
    arg: `--cache-dir=${LISTING_CACHE_MOUNT}`,
  };
}

/**
 * Velero's list of what a data-mover pod takes from the node agent's pod besides its settings: the label Azure's
 * workload identity webhook acts on, kiam's AWS role annotation, and the tolerations of taints some clouds put on whole
 * node pools (AKS spot pools, system pools), so that a data mover has the node agent's cloud identity and may run on
 * the nodes it runs on. The node agent's pod carries its DaemonSet template's labels, annotations and tolerations.
 */
export const INHERITED_LABELS: readonly string[] = ['azure.workload.identity/use'];
export const INHERITED_ANNOTATIONS: readonly string[] = ['iam.amazonaws.com/role'];
export const INHERITED_TOLERATION_KEYS: readonly string[] = ['kubernetes.azure.com/scalesetpriority', 'CriticalAddonsOnly'];

/** The entries of `from` under `keys`. */
function picked(from: Readonly<Record<string, string>> | undefined, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) if (from?.[k] !== undefined) out[k] = from[k];
  return out;
}

/** The node agent's first toleration of each inherited key (as Velero takes them). */
function inheritedTolerations(nodeAgentPod: V1Pod): V1Toleration[] {
  const all = nodeAgentPod.spec?.tolerations ?? [];
  return INHERITED_TOLERATION_KEYS.flatMap((key) => all.find((t) => t.key === key) ?? []);
}

/** The path the data mover sees its volume at: /<owner uid>. */
export const volumePathOf = (uid: string) => `/${uid}`;

/** A data-mover pod: the given volume, command and placement, everything else inherited from the node-agent pod. */
export function dataMoverPodShell(input: DataMoverPodShellInput): V1Pod {
  const { owner, nodeAgentPod } = input;
  const agent = nodeAgentContainer(nodeAgentPod);
  const volumePath = volumePathOf(owner.uid);
  const inheritedVolumes: V1Volume[] = (nodeAgentPod.spec?.volumes ?? []).filter((v) => !notInherited(v.name));
  const cache = listingCache(input);
  const inheritedMounts: V1VolumeMount[] = [...(agent.volumeMounts ?? []).filter((m) => !notInherited(m.name)), ...(cache ? [cache.mount] : [])];
  const resources = hostingPodResources(input.config);
  const attach =
    'mount' in input.attach
      ? { volumeMounts: [{ name: owner.uid, mountPath: volumePath, ...input.attach.mount }, ...inheritedMounts] }
      : { volumeDevices: [{ name: owner.uid, devicePath: volumePath, ...input.attach.device }], volumeMounts: inheritedMounts };
  const container: V1Container = {
    name: owner.uid,
    image: agent.image ?? '',
    imagePullPolicy: agent.imagePullPolicy ?? 'IfNotPresent',
    command: ['/cairn'],
    args: [...dataMoverArgs(input), ...(cache ? [cache.arg] : [])],
    env: agent.env ?? [],
    ...(agent.envFrom ? { envFrom: agent.envFrom } : {}),
    ...attach,
    ...(resources ? { resources } : {}),
    securityContext: dataMoverContainerSecurity(input.kind, input.privileged ?? false),
  };
  const agentSpec = nodeAgentPod.spec;
  // The ConfigMap's podLabels/podAnnotations, when it has any, replace what the pod takes from the node agent (Velero).
  const { podLabels, podAnnotations } = input.config;
  const labels = podLabels ?? picked(nodeAgentPod.metadata?.labels, INHERITED_LABELS);
  const annotations = podAnnotations ?? picked(nodeAgentPod.metadata?.annotations, INHERITED_ANNOTATIONS);
  const tolerations = inheritedTolerations(nodeAgentPod);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: owner.name,
      namespace: owner.namespace,
      // The label naming the pod's PVB/PVR/DataUpload/DataDownload last: the node agent finds its pods by it.
      labels: { ...labels, [hostingPodLabel(input.kind)]: owner.name },
      ...(Object.keys(annotations).length ? { annotations: { ...annotations } } : {}),
      ownerReferences: [{ apiVersion: apiVersionOf(input.kind), kind: input.kind, name: owner.name, uid: owner.uid, controller: true }],
    },
    spec: {
      ...input.placement,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      os: { name: 'linux' },
      restartPolicy: 'Never',
      // Time to stop on SIGTERM as on cancel: abort the transfer, release the repository lock, report.
      terminationGracePeriodSeconds: DATA_MOVER_GRACE_SECONDS,
      // Root: volumes hold files of any owner, and a restore gives them back their owners.
      securityContext: { runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' }, ...(input.seLinuxType ? { seLinuxOptions: { type: input.seLinuxType } } : {}) },
      ...(agentSpec?.serviceAccountName ? { serviceAccountName: agentSpec.serviceAccountName } : {}),
      ...(agentSpec?.dnsPolicy ? { dnsPolicy: agentSpec.dnsPolicy } : {}),
      ...(agentSpec?.dnsConfig ? { dnsConfig: agentSpec.dnsConfig } : {}),
      ...(agentSpec?.imagePullSecrets ? { imagePullSecrets: agentSpec.imagePullSecrets } : {}),
      ...(agentSpec?.hostNetwork ? { hostNetwork: agentSpec.hostNetwork } : {}),
      ...(input.config.priorityClassName ? { priorityClassName: input.config.priorityClassName } : {}),
      ...(tolerations.length ? { tolerations } : {}),
      containers: [container],
      volumes: [input.volume, ...inheritedVolumes, ...(cache ? [cache.volume] : [])],
    },
  };
}

/** The fs-backup pod of one PVB/PVR: `cairn pod-volume backup|restore` on the workload volume's host path. */
export function hostingPod(input: HostingPodInput): V1Pod {
  return dataMoverPodShell({
    ...input,
    volume: { name: input.owner.uid, hostPath: { path: input.hostPath } },
    // A backup only reads the volume.
    attach: { mount: { mountPropagation: 'HostToContainer', ...(input.kind === 'PodVolumeBackup' ? { readOnly: true } : {}) } },
    placement: { nodeName: input.nodeName },
    ...(input.config.privilegedFsBackup ? { privileged: true } : {}),
  });
}

/** Why a hosting pod will never run its data mover, or undefined while it still may (Velero's IsPodUnrecoverable). */
export function unrecoverableReason(pod: V1Pod): string | undefined {
  if (pod.status?.phase === 'Failed') return `pod is Failed${pod.status.message ? `: ${pod.status.message}` : ''}`;
  if (pod.status?.phase === 'Unknown') return 'pod is in Unknown phase';
  for (const cs of pod.status?.containerStatuses ?? []) {
    const reason = cs.state?.waiting?.reason;
    if (reason === 'ImagePullBackOff' || reason === 'ErrImagePull' || reason === 'InvalidImageName' || reason === 'CreateContainerConfigError' || reason === 'CrashLoopBackOff') {
      return `container ${cs.name} is waiting: ${reason}${cs.state?.waiting?.message ? ` (${cs.state.waiting.message})` : ''}`;
    }
  }
  return undefined;
}
