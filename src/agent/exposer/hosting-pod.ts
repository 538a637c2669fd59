/**
 * The data-mover pod of one PVB/PVR (velero-interfaces.md §4.3), as a pure function of the CR, the host path and the
 * node-agent's own pod: name = CR name, owned by the CR, pinned to the node, one container named after the CR's UID
 * running `cairn pod-volume backup|restore`, only the volume's host path mounted besides what the node-agent mounts,
 * root, never restarted. Everything that configures the node-agent (env, credentials volumes, service account,
 * image) is inherited, so the data mover reaches the same storage the same way.
 */
import type { V1Container, V1Pod, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { Labels } from '../../api/constants.js';
import { formatDuration } from '../../api/duration.js';
import { hostingPodResources, type NodeAgentConfig } from '../config.js';

export type DataPathKind = 'PodVolumeBackup' | 'PodVolumeRestore';

export interface HostingPodInput {
  kind: DataPathKind;
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
/** How often the data mover records progress (an Event update, then a PVB/PVR status write). */
export const PROGRESS_INTERVAL_MS = 2000;

/** Auto-mounted service-account token volumes belong to the pod they were injected into; the new pod gets its own. */
const isInjectedToken = (name: string) => name.startsWith('kube-api-access-');

export function nodeAgentContainer(pod: V1Pod): V1Container {
  const containers = pod.spec?.containers ?? [];
  const c = containers.find((x) => x.name === NODE_AGENT_CONTAINER) ?? containers[0];
  if (!c) throw new Error('the node-agent pod has no container');
  return c;
}

export function hostingPodLabel(kind: DataPathKind): string {
  return kind === 'PodVolumeBackup' ? Labels.PodVolumeBackup : Labels.PodVolumeRestore;
}

export function hostingPod(input: HostingPodInput): V1Pod {
  const { owner, nodeAgentPod } = input;
  const agent = nodeAgentContainer(nodeAgentPod);
  const verb = input.kind === 'PodVolumeBackup' ? 'backup' : 'restore';
  const crFlag = input.kind === 'PodVolumeBackup' ? '--pod-volume-backup' : '--pod-volume-restore';
  const volumePath = `/${owner.uid}`;
  const inheritedVolumes: V1Volume[] = (nodeAgentPod.spec?.volumes ?? []).filter((v) => !isInjectedToken(v.name));
  const inheritedMounts: V1VolumeMount[] = (agent.volumeMounts ?? []).filter((m) => !isInjectedToken(m.name));
  const resources = hostingPodResources(input.config);
  const container: V1Container = {
    name: owner.uid,
    image: agent.image ?? '',
    imagePullPolicy: agent.imagePullPolicy ?? 'IfNotPresent',
    command: ['/cairn'],
    args: [
      'pod-volume',
      verb,
      `--volume-path=${volumePath}`,
      `${crFlag}=${owner.name}`,
      `--resource-timeout=${formatDuration(input.resourceTimeoutMs)}`,
      // JSON whatever the node-agent's own format: the node-agent re-emits these lines, field by field, in its log.
      '--log-format=json',
      `--log-level=${input.logLevel}`,
      // Velero's data mover reports progress every 10 s; live progress in `describe` wants it more often.
      `--progress-interval=${formatDuration(PROGRESS_INTERVAL_MS)}`,
    ],
    env: agent.env ?? [],
    ...(agent.envFrom ? { envFrom: agent.envFrom } : {}),
    volumeMounts: [{ name: owner.uid, mountPath: volumePath, mountPropagation: 'HostToContainer' }, ...inheritedMounts],
    ...(resources ? { resources } : {}),
    ...(input.config.privilegedFsBackup ? { securityContext: { privileged: true } } : {}),
  };
  const agentSpec = nodeAgentPod.spec;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: owner.name,
      namespace: owner.namespace,
      labels: { [hostingPodLabel(input.kind)]: owner.name },
      ownerReferences: [{ apiVersion: 'velero.io/v1', kind: input.kind, name: owner.name, uid: owner.uid, controller: true }],
    },
    spec: {
      nodeName: input.nodeName,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      os: { name: 'linux' },
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      securityContext: { runAsUser: 0 },
      ...(agentSpec?.serviceAccountName ? { serviceAccountName: agentSpec.serviceAccountName } : {}),
      ...(agentSpec?.dnsPolicy ? { dnsPolicy: agentSpec.dnsPolicy } : {}),
      ...(agentSpec?.dnsConfig ? { dnsConfig: agentSpec.dnsConfig } : {}),
      ...(agentSpec?.imagePullSecrets ? { imagePullSecrets: agentSpec.imagePullSecrets } : {}),
      ...(agentSpec?.hostNetwork ? { hostNetwork: agentSpec.hostNetwork } : {}),
      ...(input.config.priorityClassName ? { priorityClassName: input.config.priorityClassName } : {}),
      containers: [container],
      volumes: [{ name: owner.uid, hostPath: { path: input.hostPath } }, ...inheritedVolumes],
    },
  };
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
