/**
 * The security contexts of what install runs, and the Pod Security admission level of the install namespace
 * (docs/security.md says why each holds what it holds; the e2e tier reads them back from the running processes).
 *
 * - The server talks to the API server and the object store only: the image's unprivileged user, read-only root
 *   filesystem, no privilege escalation, no capabilities, the runtime's default seccomp profile. With the
 *   filesystem provider it runs as root, since it writes the storage directory on the node, which belongs to root.
 * - The node agent runs as root with every capability dropped but DAC_READ_SEARCH: it lists the kubelet's pod
 *   volume directories through a hostPath, whatever their owners and modes. `--privileged-node-agent` (Velero's flag)
 *   makes it a privileged container instead. Either way its root filesystem is read-only: it writes only to its
 *   `/tmp` and `/scratch` emptyDirs (the data-mover pods it makes inherit both, and the same read-only root).
 * - Plugin init containers only copy a binary into an emptyDir: the server's restrictions.
 */
import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';

/** The image's unprivileged user; the server runs as it. */
export const SERVER_USER = 65532;

const RUNTIME_DEFAULT_SECCOMP = { type: 'RuntimeDefault' } as const;

export function serverPodSecurity(opts: { filesystemProvider: boolean }): V1PodSecurityContext {
  if (opts.filesystemProvider) return { runAsUser: 0, seccompProfile: RUNTIME_DEFAULT_SECCOMP };
  return { runAsNonRoot: true, runAsUser: SERVER_USER, runAsGroup: SERVER_USER, fsGroup: SERVER_USER, seccompProfile: RUNTIME_DEFAULT_SECCOMP };
}

/** The server's container, and every container of the server pod (plugin init containers). */
export const SERVER_CONTAINER_SECURITY: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/** Root: the kubelet's pod directories belong to root. */
export const NODE_AGENT_POD_SECURITY: V1PodSecurityContext = { runAsUser: 0, seccompProfile: RUNTIME_DEFAULT_SECCOMP };

/** The capability the node agent keeps: read and search any directory (the kubelet's pod volume directories). */
export const NODE_AGENT_CAPABILITIES = ['DAC_READ_SEARCH'] as const;

export function nodeAgentContainerSecurity(privileged: boolean): V1SecurityContext {
  // A privileged container has every capability; Kubernetes refuses allowPrivilegeEscalation=false beside it.
  if (privileged) return { privileged: true, readOnlyRootFilesystem: true };
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: [...NODE_AGENT_CAPABILITIES] } };
}

/** The Pod Security admission levels install sets on its namespace. */
export type PodSecurityLevel = 'restricted' | 'privileged';

/**
 * `privileged` when a pod of the namespace needs a hostPath (the node agent reads the kubelet's pods directory; the
 * filesystem provider's server writes its storage directory on the node), else `restricted`: everything the server
 * pod does passes it.
 */
export function namespacePodSecurity(opts: { useNodeAgent: boolean; filesystemProvider: boolean }): PodSecurityLevel {
  return opts.useNodeAgent || opts.filesystemProvider ? 'privileged' : 'restricted';
}

export function podSecurityLabels(level: PodSecurityLevel): Record<string, string> {
  return { 'pod-security.kubernetes.io/enforce': level, 'pod-security.kubernetes.io/enforce-version': 'latest' };
}
