/**
 * Repository locks taken inside Kubernetes: a data-mover pod records itself in its locks (its name, namespace and
 * UID from the downward API), and anyone with a cluster client can then tell a leftover lock (its pod is gone, or is
 * another pod of the same name) from one whose command still runs, without waiting for it to go stale.
 */
import type { LockInfo, LockLiveness, LockOwnerPod, OwnerLiveness } from '../datapath/locks.js';
import type { Kube } from '../kube/client.js';

/** This pod, from the env the install sets (CAIRN_NAMESPACE, POD_NAME, POD_UID); undefined outside a pod. */
export function lockOwnerFromEnv(env: NodeJS.ProcessEnv): LockOwnerPod | undefined {
  const namespace = env.CAIRN_NAMESPACE;
  const name = env.POD_NAME;
  const uid = env.POD_UID;
  return namespace && name && uid ? { namespace, name, uid } : undefined;
}

/** Looks a lock's pod up: gone when it does not exist or has another UID; unknown when the lookup fails otherwise. */
export function podLockLiveness(kube: Kube): LockLiveness {
  return async (info: LockInfo): Promise<OwnerLiveness> => {
    const pod = info.pod;
    if (!pod) return 'unknown';
    try {
      const found = await kube.core.readNamespacedPod({ namespace: pod.namespace, name: pod.name });
      if (found.metadata?.uid !== pod.uid) return 'gone';
      // A pod that has finished runs nothing any more, even while it is still listed.
      return found.status?.phase === 'Succeeded' || found.status?.phase === 'Failed' ? 'gone' : 'alive';
    } catch (err) {
      return (err as { code?: number }).code === 404 ? 'gone' : 'unknown';
    }
  };
}
