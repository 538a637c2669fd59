/** Asking one volume operation (a PodVolumeBackup, a DataUpload) to stop: what its backup's cancel and clean-up do to it. */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CustomClient } from '../kube/custom.js';

interface CancelableOperation extends KubernetesObject {
  spec: { cancel?: boolean | undefined };
  status?: { message?: string | undefined } | undefined;
}

/**
 * Sets `spec.cancel` on the operation `name`, then `message` as its status message, each unless it has ended
 * meanwhile (`isTerminal`) or was asked already. False when nothing was asked (ended, asked already, or gone).
 */
export async function requestOperationCancel<T extends CancelableOperation>(
  client: CustomClient<T>,
  namespace: string,
  name: string,
  o: { isTerminal: (op: T) => boolean; message: string },
): Promise<boolean> {
  let changed = false;
  await client.update(namespace, name, (op) => {
    changed = false;
    if (op.spec.cancel || o.isTerminal(op)) return false;
    op.spec = { ...op.spec, cancel: true };
    changed = true;
  });
  if (!changed) return false;
  await client.updateStatus(namespace, name, (op) => {
    if (o.isTerminal(op)) return false;
    op.status = { ...(op.status ?? {}), message: o.message };
  });
  return true;
}
