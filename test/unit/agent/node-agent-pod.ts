/**
 * The node-agent pod the exposers copy a data mover's image, env, credentials and service account from, with the
 * volumes it must not pass on (its service-account token, the kubelet's pods directory), and the hostingPod input
 * of tests about one setting.
 */
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import type { HostingPodInput } from '../../../src/agent/exposer/hosting-pod.js';

/** `container` and `spec` add to the node-agent container and pod spec (what a test checks is copied or not). */
export function nodeAgentPod(container: Partial<V1Container> = {}, spec: Partial<V1PodSpec> = {}): V1Pod {
  return {
    metadata: { name: 'node-agent-abc', namespace: 'velero' },
    spec: {
      serviceAccountName: 'cairn-node-agent',
      ...spec,
      containers: [
        {
          name: 'node-agent',
          image: 'ghcr.io/cairn-backup/cairn:v1',
          ...container,
          volumeMounts: [
            { name: 'host-pods', mountPath: '/host_pods', mountPropagation: 'HostToContainer' },
            { name: 'cloud-credentials', mountPath: '/credentials', readOnly: true },
            { name: 'kube-api-access-x1', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
        },
      ],
      volumes: [
        { name: 'host-pods', hostPath: { path: '/var/lib/kubelet/pods' } },
        { name: 'cloud-credentials', secret: { secretName: 'cloud-credentials' } },
        { name: 'kube-api-access-x1', projected: { sources: [] } },
      ],
    },
  };
}

/** hostingPod's input on node n for host path /h, one-minute timeout, log level info: `over` says what a test is about. */
export function hostingPodInput(nodeAgent: V1Pod, over: Partial<HostingPodInput> & Pick<HostingPodInput, 'kind' | 'owner'>): HostingPodInput {
  return { nodeName: 'n', hostPath: '/h', nodeAgentPod: nodeAgent, resourceTimeoutMs: 60_000, logLevel: 'info', config: {}, ...over };
}
