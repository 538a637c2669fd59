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
import {
  Labels,
  creationTimestampOf,
  labelValue,
  parseBackupOperations,
  parseRestoreOperations,
  selectorFor,
  type Backup,
  type BackupOperation,
  type DownloadTargetKind,
  type Restore,
  type RestoreOperation,
} from '../../api/index.js';
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
  const files = await readFiles<BackupVolumeInfo, BackupOperation>(kube, opts, {
    name,
    stored: !['New', 'FailedValidation', 'InProgress', 'Canceling', 'Canceled'].includes(phase),
    status: backup.status,
    kinds: { results: 'BackupResults', volumeInfo: 'BackupVolumeInfos', resourceList: 'BackupResourceList', itemOperations: 'BackupItemOperations' },
    wantsVolumeInfo: backup.spec.snapshotVolumes !== false && (opts.text || opts.details),
    operationsAttempted: backup.status?.backupItemOperationsAttempted ?? 0,
    parseOperations: parseBackupOperations,
  });
  return { deleteRequests: byCreation(deleteRequests), podVolumeBackups, dataUploads: byName(dataUploads), ...files };
}

export async function gatherRestore(kube: Kube, restore: Restore, opts: GatherOptions) {
  const ns = opts.namespace;
  const name = restore.metadata.name ?? '';
  const selector = selectorFor({ [Labels.RestoreName]: labelValue(name) });
  const [podVolumeRestores, dataDownloads] = await Promise.all([
    retryTransient(() => podVolumeRestoreClient(kube).list(ns, selector)),
    retryTransient(() => dataDownloadClient(kube).list(ns, selector)),
  ]);
  const phase = restore.status?.phase ?? 'New';
  const files = await readFiles<RestoreVolumeInfo, RestoreOperation>(kube, opts, {
    name,
    stored: !['New', 'FailedValidation', 'InProgress'].includes(phase),
    status: restore.status,
    kinds: { results: 'RestoreResults', volumeInfo: 'RestoreVolumeInfo', resourceList: 'RestoreResourceList', itemOperations: 'RestoreItemOperations' },
    // Always: restore describe shows the volumes not restored and the CSI snapshot restores without --details too.
    wantsVolumeInfo: true,
    operationsAttempted: restore.status?.restoreItemOperationsAttempted ?? 0,
    parseOperations: parseRestoreOperations,
  });
  return { podVolumeRestores, dataDownloads, ...files };
}

/**
 * The files a backup or restore describe reads from storage, each only when it is wanted: the results when there
 * are warnings or errors, the resource list with details, the item operations with details when any were attempted.
 * Before the object's files are stored nothing is asked of the server.
 */
async function readFiles<VolumeInfo, Operation>(
  kube: Kube,
  opts: GatherOptions,
  o: {
    name: string;
    stored: boolean;
    status: { warnings?: number | undefined; errors?: number | undefined } | undefined;
    kinds: { results: DownloadTargetKind; volumeInfo: DownloadTargetKind; resourceList: DownloadTargetKind; itemOperations: DownloadTargetKind };
    wantsVolumeInfo: boolean;
    operationsAttempted: number;
    parseOperations: (v: unknown) => Operation[];
  },
): Promise<{
  results: Fetched<Results> | undefined;
  volumeInfo: Fetched<VolumeInfo[]> | undefined;
  resourceList: Fetched<Record<string, string[]>> | undefined;
  itemOperations: Fetched<Operation[]> | undefined;
}> {
  const logger = opts.logger ? { logger: opts.logger } : {};
  const read = <T>(kind: DownloadTargetKind): Promise<Fetched<T>> =>
    o.stored ? fetchJson<T>(kube, { namespace: opts.namespace, kind, name: o.name, timeoutMs: opts.timeoutMs, ...logger }) : Promise.resolve(NOT_STORED);
  const hasResults = (o.status?.warnings ?? 0) > 0 || (o.status?.errors ?? 0) > 0;
  const wantsOperations = opts.details && o.operationsAttempted > 0;
  const [results, volumeInfo, resourceList, itemOperations] = await Promise.all([
    hasResults ? read<Results>(o.kinds.results) : Promise.resolve(undefined),
    o.wantsVolumeInfo ? read<VolumeInfo[]>(o.kinds.volumeInfo) : Promise.resolve(undefined),
    opts.details ? read<Record<string, string[]>>(o.kinds.resourceList) : Promise.resolve(undefined),
    wantsOperations ? read<unknown>(o.kinds.itemOperations).then((f) => parsedOperations(f, o.parseOperations)) : Promise.resolve(undefined),
  ]);
  return { results, volumeInfo, resourceList, itemOperations };
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
