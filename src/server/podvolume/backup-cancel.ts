/**
 * Asks the node agents to stop the PodVolumeBackups of a backup nobody waits for any more (it failed, or its
 * fs-backup timeout passed): `spec.cancel=true` plus a message, on every PVB not already terminal or canceling.
 */
import { Kinds, Labels, parsePodVolumeBackup, type PodVolumeBackup } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { isTerminal } from './backup-pvb.js';
import { requestOperationCancel } from '../volume-operation-cancel.js';

/** Velero's message for PVBs of a backup the server could not resume. */
export function serverStartCancelMessage(phase: string): string {
  return `PVB is in status "${phase}" during the server starting, mark it as cancel`;
}

/** The message for PVBs of a backup that failed for another reason. */
export function backupFailedCancelMessage(phase: string): string {
  return `PVB is in status "${phase}" and its backup failed, mark it as cancel`;
}

export interface CancelPodVolumeBackupsOptions {
  kube: Kube;
  namespace: string;
  backupUid: string;
  log: Logger;
  /** The message for a PVB in the given phase (default: Velero's server-start message). */
  message?: (phase: string) => string;
  /** Only these PVBs (by name); default all of the backup. */
  only?: ReadonlySet<string>;
}

/** Returns the names of the PVBs asked to cancel. */
export async function cancelPodVolumeBackups(opts: CancelPodVolumeBackupsOptions): Promise<string[]> {
  const client = customClient<PodVolumeBackup>(opts.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  const message = opts.message ?? serverStartCancelMessage;
  const canceled: string[] = [];
  for (const pvb of await client.list(opts.namespace, `${Labels.BackupUID}=${opts.backupUid}`)) {
    const name = pvb.metadata.name ?? '';
    if (opts.only && !opts.only.has(name)) continue;
    if (isTerminal(pvb) || pvb.spec.cancel) continue;
    const phase = pvb.status?.phase || 'New';
    if (!(await requestOperationCancel(client, opts.namespace, name, { isTerminal, message: message(phase) }))) continue;
    opts.log.warn({ podVolumeBackup: name, phase }, message(phase));
    canceled.push(name);
  }
  return canceled;
}
