/**
 * What `backup describe` / `restore describe` read besides the object itself: related objects from the API server
 * and the files kept in storage (through DownloadRequests). Shared by the describe commands and `debug`.
 */
import {
  backupClient,
  dataUploadClient,
  deleteRequestClient,
  fetchJson,
  parsedOperations,
  podVolumeBackupClient,
  type Fetched,
} from '../backups.js';
import { dataDownloadClient, podVolumeRestoreClient, restoreClient } from '../restores.js';
import { Labels, creationTimestampOf, labelValue, parseBackupOperations, parseRestoreOperations, selectorFor, type Backup, type Restore } from '../../api/index.js';
import { retryTransient, type Kube } from '../../kube/client.js';
import type { Logger } from '../../base/logger.js';
import { NotFoundError } from '../../base/errors.js';
import type { Results } from '../../api/results.js';
import type { BackupVolumeInfo, RestoreVolumeInfo } from '../../api/volume-info.js';
import { describeBackup } from './backup.js';
import { describeRestore } from './restore.js';
import { colours } from '../colour.js';

const NOT_STORED = { ok: false, notFound: true, error: 'not stored yet' } as const;

export interface GatherOptions {
  namespace: string;
  details: boolean;
  /** Text (table) output: reads the volume info even without --details. */
  text: boolean;
  timeoutMs: number;
  logger?: Logger | undefined;
}

export async function gatherBackup(kube: Kube, backup: Backup, opts: GatherOptions) {
  const ns = opts.namespace;
  const name = backup.metadata.name ?? '';
  const selector = selectorFor({ [Labels.BackupName]: labelValue(name) });
  const uid = backup.metadata.uid ?? '';
  const [deleteRequests, podVolumeBackups, dataUploads] = await Promise.all([
    retryTransient(() => deleteRequestClient(kube).list(ns, selector)),
    retryTransient(() => podVolumeBackupClient(kube).list(ns, selector)),
    uid ? retryTransient(() => dataUploadClient(kube).list(ns, selectorFor({ [Labels.BackupUID]: uid }))) : Promise.resolve([]),
  ]);
  // Files exist only once the backup was persisted (and a canceled backup's are deleted); otherwise nothing is asked
  // of the server.
  const phase = backup.status?.phase ?? 'New';
  const stored = !['New', 'FailedValidation', 'InProgress', 'Canceling', 'Canceled'].includes(phase);
  const logger = opts.logger ? { logger: opts.logger } : {};
  const read = <T>(kind: 'BackupResults' | 'BackupVolumeInfos' | 'BackupResourceList' | 'BackupItemOperations'): Promise<Fetched<T>> =>
    stored ? fetchJson<T>(kube, { namespace: ns, kind, name, timeoutMs: opts.timeoutMs, ...logger }) : Promise.resolve(NOT_STORED);
  const hasResults = (backup.status?.warnings ?? 0) > 0 || (backup.status?.errors ?? 0) > 0;
  const wantsVolumes = backup.spec.snapshotVolumes !== false && (opts.text || opts.details);
  const wantsOperations = opts.details && (backup.status?.backupItemOperationsAttempted ?? 0) > 0;
  const [results, volumeInfo, resourceList, itemOperations] = await Promise.all([
    hasResults ? read<Results>('BackupResults') : Promise.resolve(undefined),
    wantsVolumes ? read<BackupVolumeInfo[]>('BackupVolumeInfos') : Promise.resolve(undefined),
    opts.details ? read<Record<string, string[]>>('BackupResourceList') : Promise.resolve(undefined),
    wantsOperations ? read<unknown>('BackupItemOperations').then((f) => parsedOperations(f, parseBackupOperations)) : Promise.resolve(undefined),
  ]);
  return { deleteRequests: byCreation(deleteRequests), podVolumeBackups, dataUploads: byName(dataUploads), results, volumeInfo, resourceList, itemOperations };
}

export async function gatherRestore(kube: Kube, restore: Restore, opts: GatherOptions) {
  const ns = opts.namespace;
  const name = restore.metadata.name ?? '';
  const selector = selectorFor({ [Labels.RestoreName]: labelValue(name) });
  const podVolumeRestores = await retryTransient(() => podVolumeRestoreClient(kube).list(ns, selector));
  const dataDownloads = await retryTransient(() => dataDownloadClient(kube).list(ns, selector));
  const phase = restore.status?.phase ?? 'New';
  const stored = !['New', 'FailedValidation', 'InProgress'].includes(phase);
  const logger = opts.logger ? { logger: opts.logger } : {};
  const read = <T>(kind: 'RestoreResults' | 'RestoreVolumeInfo' | 'RestoreResourceList' | 'RestoreItemOperations'): Promise<Fetched<T>> =>
    stored ? fetchJson<T>(kube, { namespace: ns, kind, name, timeoutMs: opts.timeoutMs, ...logger }) : Promise.resolve(NOT_STORED);
  const hasResults = (restore.status?.warnings ?? 0) > 0 || (restore.status?.errors ?? 0) > 0;
  const wantsOperations = opts.details && (restore.status?.restoreItemOperationsAttempted ?? 0) > 0;
  const [results, volumeInfo, resourceList, itemOperations] = await Promise.all([
    hasResults ? read<Results>('RestoreResults') : Promise.resolve(undefined),
    read<RestoreVolumeInfo[]>('RestoreVolumeInfo'),
    opts.details ? read<Record<string, string[]>>('RestoreResourceList') : Promise.resolve(undefined),
    wantsOperations ? read<unknown>('RestoreItemOperations').then((f) => parsedOperations(f, parseRestoreOperations)) : Promise.resolve(undefined),
  ]);
  return { podVolumeRestores, dataDownloads, results, volumeInfo, resourceList, itemOperations };
}

/** `backup describe NAME --details` as text without colour (what `debug` keeps). */
export async function describeBackupText(kube: Kube, name: string, opts: Omit<GatherOptions, 'details' | 'text'>): Promise<string> {
  const backup = await backupClient(kube).get(opts.namespace, name);
  if (!backup) throw new NotFoundError(`backup "${name}" not found in namespace "${opts.namespace}"`);
  const gathered = await gatherBackup(kube, backup, { ...opts, details: true, text: true });
  return describeBackup({ backup, details: true, colours: colours(false), ...gathered });
}

/** `restore describe NAME --details` as text without colour. */
export async function describeRestoreText(kube: Kube, name: string, opts: Omit<GatherOptions, 'details' | 'text'>): Promise<string> {
  const restore = await restoreClient(kube).get(opts.namespace, name);
  if (!restore) throw new NotFoundError(`restore "${name}" not found in namespace "${opts.namespace}"`);
  const gathered = await gatherRestore(kube, restore, { ...opts, details: true, text: true });
  return describeRestore({ restore, details: true, colours: colours(false), ...gathered });
}

function byName<T extends { metadata: { name?: string | undefined } }>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/** Oldest first, as the deletion attempts happened. */
function byCreation<T extends { metadata: object }>(items: T[]): T[] {
  return [...items].sort((a, b) => (creationTimestampOf(a)?.getTime() ?? 0) - (creationTimestampOf(b)?.getTime() ?? 0));
}
