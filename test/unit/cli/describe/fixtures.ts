/**
 * What the describe tests share: plain (uncoloured) output and the describers run with it, a pod volume backup and a
 * restore still waiting for its volumes.
 */
import type { PodVolumeBackup, Restore } from '../../../../src/api/index.js';
import { colours } from '../../../../src/cli/colour.js';
import { describeBackup, type BackupDescribeInput } from '../../../../src/cli/describe/backup.js';
import { describeRestore, type RestoreDescribeInput } from '../../../../src/cli/describe/restore.js';

export const plain = colours(false);

/** `T` with the fields `K` made optional. */
type Defaulted<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

/** `backup describe` text without colour; no pod volume backups and no deletion requests unless the test gives them. */
export function describePlainBackup(input: Defaulted<Omit<BackupDescribeInput, 'colours'>, 'podVolumeBackups' | 'deleteRequests'>): string {
  return describeBackup({ colours: plain, podVolumeBackups: [], deleteRequests: [], ...input });
}

/** `restore describe` text without colour; no pod volume restores unless the test gives them. */
export function describePlainRestore(input: Defaulted<Omit<RestoreDescribeInput, 'colours'>, 'podVolumeRestores'>): string {
  return describeRestore({ colours: plain, podVolumeRestores: [], ...input });
}

/** Restore app-restore of backup app-backup, its items restored, waiting for its volume operations. */
export function waitingRestore(): Restore {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Restore',
    metadata: { name: 'app-restore', namespace: 'velero' },
    spec: { backupName: 'app-backup' },
    status: { phase: 'WaitingForPluginOperations', progress: { totalItems: 20, itemsRestored: 20 } },
  } as Restore;
}

/** The part of a description from the line starting with `from` up to (not including) `to`. */
export function textBetween(text: string, from: string, to: string): string {
  return text.slice(text.indexOf(from), text.indexOf(to));
}

/** A kopia PodVolumeBackup `name` of the volume `volume` of `pod`, run on node n1, in `phase`. */
export function podVolumeBackup(name: string, pod: { namespace: string; name: string }, volume: string, phase: string): PodVolumeBackup {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'PodVolumeBackup',
    metadata: { name, namespace: 'velero' },
    spec: { node: 'n1', pod, volume, backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia' },
    status: { phase },
  } as PodVolumeBackup;
}
