/**
 * `backup create|get|delete`: building a Backup from Velero's flags (validated locally, each error naming its flag),
 * the `backup get` table, DeleteBackupRequests, and the JSON shapes `-o json|yaml` prints (documented in docs/cli.md).
 */
import {
  CANCELABLE_BACKUP_PHASES,
  Kinds,
  Labels,
  creationTimestampOf,
  deletionTimestampOf,
  formatDurationNanos,
  isValidName,
  labelValue,
  nameProblem,
  newBackup,
  newDeleteBackupRequest,
  parseBackup,
  parseDeleteBackupRequest,
  parseDurationNanos,
  parseDataUpload,
  parsePodVolumeBackup,
  type Backup,
  type BackupSpec,
  type DataUpload,
  type DeleteBackupRequest,
  type DownloadTargetKind,
  type PodVolumeBackup,
} from '../api/index.js';
import { NotFoundError, UsageError, oneLine } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { fetchDownload } from '../server/download/client.js';
import { type Column } from './output.js';
import { formatLabelSelector, parseLabelSelector, parseOrSelectors, type LabelSelectorObject } from './label-selector.js';
import { customClient, type CustomClient } from '../kube/custom.js';
import { type Kube } from '../kube/client.js';
import type { Results } from '../api/results.js';
import type { BackupVolumeInfo } from '../api/volume-info.js';

export function backupClient(kube: Kube): CustomClient<Backup> {
  return customClient<Backup>(kube, Kinds.Backup, parseBackup);
}

export function deleteRequestClient(kube: Kube): CustomClient<DeleteBackupRequest> {
  return customClient<DeleteBackupRequest>(kube, Kinds.DeleteBackupRequest, parseDeleteBackupRequest);
}

export function dataUploadClient(kube: Kube): CustomClient<DataUpload> {
  return customClient<DataUpload>(kube, Kinds.DataUpload, parseDataUpload);
}

export function podVolumeBackupClient(kube: Kube): CustomClient<PodVolumeBackup> {
  return customClient<PodVolumeBackup>(kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
}

/** Started and not finished: deleting it cancels it first (docs/backup.md). */
export function isRunningBackup(backup: Backup): boolean {
  const phase = backup.status?.phase ?? '';
  return phase === 'Canceling' || (phase !== '' && phase !== 'New' && CANCELABLE_BACKUP_PHASES.has(phase));
}

/** A tri-state flag as typed: unset, true or false. */
export type TriState = boolean | undefined;

/** The flags of `backup create`, as parsed (strings are the raw text the user typed). */
export interface BackupCreateFlags {
  name: string;
  namespace: string;
  'include-namespaces'?: string | undefined;
  'exclude-namespaces'?: string | undefined;
  'include-resources'?: string | undefined;
  'exclude-resources'?: string | undefined;
  'include-cluster-resources'?: TriState;
  'include-cluster-scoped-resources'?: string | undefined;
  'exclude-cluster-scoped-resources'?: string | undefined;
  'include-namespace-scoped-resources'?: string | undefined;
  'exclude-namespace-scoped-resources'?: string | undefined;
  'ordered-resources'?: string | undefined;
  'resource-policies-configmap'?: string | undefined;
  selector?: string | undefined;
  'or-selector'?: string | undefined;
  ttl?: string | undefined;
  'storage-location'?: string | undefined;
  'default-volumes-to-fs-backup'?: TriState;
  'snapshot-volumes'?: TriState;
  'snapshot-move-data'?: TriState;
  'data-mover'?: string | undefined;
  'item-operation-timeout'?: string | undefined;
  'csi-snapshot-timeout'?: string | undefined;
  labels?: string | undefined;
  annotations?: string | undefined;
}

/** `a,b, c` → ['a','b','c']; empty items dropped. */
export function splitList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `k=v,k2=v2` → a map; every key must be a valid label key and appear once. */
export function parseKeyValues(flag: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of splitList(text)) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(flag, `"${item}" is not key=value`);
    const key = item.slice(0, eq).trim();
    if (key in out) throw new UsageError(flag, `"${key}" given twice`);
    out[key] = item.slice(eq + 1).trim();
  }
  return out;
}

function checkNamespaces(flag: string, names: string[], pattern: RegExp): string[] {
  for (const n of names) {
    if (n === '*' || pattern.test(n)) continue;
    throw new UsageError(flag, `"${n}" is not a namespace name or pattern`);
  }
  return names;
}

function checkResources(flag: string, names: string[]): string[] {
  for (const n of names) {
    if (n === '*' || /^[A-Za-z0-9.-]+$/.test(n)) continue;
    throw new UsageError(flag, `"${n}" is not a resource (resource or resource.group)`);
  }
  return names;
}

/** The namespace and resource filter flags `backup create` and `restore create` both take. */
export interface FilterFlags {
  'include-namespaces'?: string | undefined;
  'exclude-namespaces'?: string | undefined;
  'include-resources'?: string | undefined;
  'exclude-resources'?: string | undefined;
  'include-cluster-resources'?: TriState;
}

/**
 * The spec fields of the namespace and resource filter flags, in the order the spec lists them; errors name the flag.
 * `namespacePattern` is what a namespace entry may look like: restore also takes `?` and `[...]` in it.
 */
export function filterSpec(
  flags: FilterFlags,
  namespacePattern: RegExp,
): Pick<BackupSpec, 'includedNamespaces' | 'excludedNamespaces' | 'includedResources' | 'excludedResources' | 'includeClusterResources'> {
  const spec: ReturnType<typeof filterSpec> = {};
  const include = flags['include-namespaces'] === undefined ? ['*'] : splitList(flags['include-namespaces']);
  spec.includedNamespaces = checkNamespaces('--include-namespaces', include.length ? include : ['*'], namespacePattern);
  const exclude = splitList(flags['exclude-namespaces']);
  if (exclude.length) spec.excludedNamespaces = checkNamespaces('--exclude-namespaces', exclude, namespacePattern);
  const incRes = splitList(flags['include-resources']);
  if (incRes.length) spec.includedResources = checkResources('--include-resources', incRes);
  const excRes = splitList(flags['exclude-resources']);
  if (excRes.length) spec.excludedResources = checkResources('--exclude-resources', excRes);
  if (flags['include-cluster-resources'] !== undefined) spec.includeClusterResources = flags['include-cluster-resources'];
  return spec;
}

/** `--selector` or `--or-selector` (not both) as the spec's selector fields; errors name the flag. */
export function selectorSpec(flags: { selector?: string | undefined; 'or-selector'?: string | undefined }): Pick<BackupSpec, 'labelSelector' | 'orLabelSelectors'> {
  if (flags.selector && flags['or-selector']) throw new UsageError('--or-selector', 'cannot be combined with --selector (use one or the other)');
  return {
    ...(flags.selector ? { labelSelector: parseLabelSelector('--selector', flags.selector) } : {}),
    ...(flags['or-selector'] ? { orLabelSelectors: parseOrSelectors('--or-selector', flags['or-selector']) } : {}),
  };
}

/**
 * `--ordered-resources`: Velero's `kind=ns/name,ns/name;kind=name` text as the spec's map of resource → object list
 * (each value stays the comma-separated text Velero stores).
 */
export function parseOrderedResources(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(';').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const resource = eq > 0 ? part.slice(0, eq).trim() : '';
    const objects = eq > 0 ? part.slice(eq + 1).split(',').map((o) => o.trim()).filter(Boolean) : [];
    if (!resource || !objects.length) throw new UsageError('--ordered-resources', `"${part}" is not resource=name[,name...] (e.g. pods=ns1/pod1,ns1/pod2;persistentvolumes=pv1)`);
    if (!/^[A-Za-z0-9.-]+$/.test(resource)) throw new UsageError('--ordered-resources', `"${resource}" is not a resource (resource or resource.group)`);
    if (resource in out) throw new UsageError('--ordered-resources', `"${resource}" given twice`);
    out[resource] = objects.join(',');
  }
  return out;
}

/** A Go duration flag → its canonical form ("24h" → "24h0m0s"), as Velero's metav1.Duration serialises it. */
export function canonicalDuration(flag: string, text: string): string {
  const nanos = parseDurationNanos(text.trim());
  if (nanos === undefined || nanos < 0n) throw new UsageError(flag, `"${text}" is not a duration (examples: 24h, 720h, 90m)`);
  return formatDurationNanos(nanos);
}

export function checkObjectName(flag: string, kind: string, name: string): string {
  const problem = nameProblem(name) ?? (isValidName(name) ? undefined : `"${name}" is not a valid name`);
  if (problem) throw new UsageError(flag, `invalid ${kind} name: ${problem}`);
  return name;
}

/**
 * `--data-mover`: the data mover that moves the snapshot data ("velero" or empty = cairn's node agent; another
 * name is left to a third-party mover). A name as Kubernetes names go, since it is matched against a DataUpload's
 * spec.datamover and often used in labels.
 */
export function checkDataMover(name: string): string {
  const text = name.trim();
  if (text === '') return '';
  if (text.length > 63 || !/^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$/.test(text)) {
    throw new UsageError('--data-mover', `"${name}" is not a data mover name (lowercase letters, digits, '-', '.', '_'; at most 63 characters), e.g. velero`);
  }
  return text;
}

/** Builds the Backup `backup create` submits; throws UsageError naming the flag for any bad input. */
export function buildBackup(flags: BackupCreateFlags): Backup {
  checkObjectName('NAME', 'backup', flags.name);
  const spec = buildBackupSpec(flags);
  const { labels, annotations } = objectMetaFlags(flags);
  return newBackup({ namespace: flags.namespace, name: flags.name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}), spec });
}

/** `--labels` and `--annotations` as maps (undefined when not given). */
export function objectMetaFlags(flags: Pick<BackupCreateFlags, 'labels' | 'annotations'>): { labels?: Record<string, string>; annotations?: Record<string, string> } {
  return {
    ...(flags.labels ? { labels: parseKeyValues('--labels', flags.labels) } : {}),
    ...(flags.annotations ? { annotations: parseKeyValues('--annotations', flags.annotations) } : {}),
  };
}

/** The BackupSpec the backup flags describe (`backup create`, and a schedule's template); errors name the flag. */
export function buildBackupSpec(flags: Omit<BackupCreateFlags, 'name' | 'namespace'>): BackupSpec {
  const spec: BackupSpec = filterSpec(flags, /^[a-z0-9*-]+$/);
  const scoped = [
    ['include-cluster-scoped-resources', 'includedClusterScopedResources'],
    ['exclude-cluster-scoped-resources', 'excludedClusterScopedResources'],
    ['include-namespace-scoped-resources', 'includedNamespaceScopedResources'],
    ['exclude-namespace-scoped-resources', 'excludedNamespaceScopedResources'],
  ] as const;
  for (const [flag, field] of scoped) {
    const list = splitList(flags[flag]);
    if (list.length) spec[field] = checkResources(`--${flag}`, list);
  }
  const old = Boolean(spec.includedResources?.length || spec.excludedResources?.length || spec.includeClusterResources !== undefined);
  const scopedGiven = scoped.find(([flag]) => splitList(flags[flag]).length > 0);
  if (old && scopedGiven) {
    throw new UsageError(
      `--${scopedGiven[0]}`,
      'include-resources, exclude-resources and include-cluster-resources are old filter parameters; include-cluster-scoped-resources, exclude-cluster-scoped-resources, include-namespace-scoped-resources and exclude-namespace-scoped-resources are new filter parameters. They cannot be used together',
    );
  }
  if (flags['ordered-resources'] !== undefined) spec.orderedResources = parseOrderedResources(flags['ordered-resources']);
  if (flags['resource-policies-configmap']) spec.resourcePolicy = { kind: 'configmap', name: checkObjectName('--resource-policies-configmap', 'ConfigMap', flags['resource-policies-configmap']) };
  Object.assign(spec, selectorSpec(flags));
  if (flags.ttl !== undefined) spec.ttl = canonicalDuration('--ttl', flags.ttl);
  if (flags['storage-location']) spec.storageLocation = checkObjectName('--storage-location', 'storage location', flags['storage-location']);
  if (flags['snapshot-volumes'] !== undefined) spec.snapshotVolumes = flags['snapshot-volumes'];
  if (flags['default-volumes-to-fs-backup'] !== undefined) spec.defaultVolumesToFsBackup = flags['default-volumes-to-fs-backup'];
  if (flags['snapshot-move-data'] !== undefined) spec.snapshotMoveData = flags['snapshot-move-data'];
  if (flags['data-mover'] !== undefined) spec.datamover = checkDataMover(flags['data-mover']);
  if (flags['item-operation-timeout'] !== undefined) spec.itemOperationTimeout = canonicalDuration('--item-operation-timeout', flags['item-operation-timeout']);
  if (flags['csi-snapshot-timeout'] !== undefined) spec.csiSnapshotTimeout = canonicalDuration('--csi-snapshot-timeout', flags['csi-snapshot-timeout']);
  return spec;
}

/** The backup-spec flags that were given (a `--from-schedule` backup takes its spec from the schedule instead). */
export function givenBackupSpecFlags(flags: Omit<BackupCreateFlags, 'name' | 'namespace'>): string[] {
  const given = flags as Readonly<Record<string, unknown>>;
  return BACKUP_SPEC_FLAG_NAMES.filter((k) => given[k] !== undefined).map((k) => `--${k}`);
}

const BACKUP_SPEC_FLAG_NAMES: readonly string[] = [
  'include-namespaces',
  'exclude-namespaces',
  'include-resources',
  'exclude-resources',
  'include-cluster-resources',
  'selector',
  'or-selector',
  'ttl',
  'storage-location',
  'default-volumes-to-fs-backup',
  'snapshot-volumes',
  'snapshot-move-data',
  'data-mover',
  'item-operation-timeout',
  'csi-snapshot-timeout',
  'labels',
  'annotations',
];

/** Velero's DeleteBackupRequest for a backup: generateName `<backup>-`, labelled with the backup's name and UID. */
export function deleteRequestFor(backup: Backup): DeleteBackupRequest {
  const name = backup.metadata.name ?? '';
  const labels: Record<string, string> = { [Labels.BackupName]: labelValue(name) };
  if (backup.metadata.uid) labels[Labels.BackupUID] = backup.metadata.uid;
  return newDeleteBackupRequest({
    namespace: backup.metadata.namespace ?? 'velero',
    generateName: `${name.slice(0, 200)}-`,
    labels,
    spec: { backupName: name },
  });
}

/** Volume data of pod volume backups/restores summed: what `--wait` shows next to the item count. */
export function volumeBytes(items: readonly { status?: { progress?: { bytesDone?: number; totalBytes?: number } } }[]): { bytesDone: number; totalBytes: number } {
  let bytesDone = 0;
  let totalBytes = 0;
  for (const it of items) {
    bytesDone += it.status?.progress?.bytesDone ?? 0;
    totalBytes += it.status?.progress?.totalBytes ?? 0;
  }
  return { bytesDone, totalBytes };
}

/** Go's time.Time.String() in UTC: `2025-10-01 10:00:00 +0000 UTC`. */
export function formatGoTime(value: string | Date | undefined | null): string | undefined {
  if (!value) return undefined;
  const d = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(d.getTime())) return undefined;
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;
}

/** Kubernetes' ShortHumanDuration: 45s, 12m, 5h, 29d, 2y. */
export function shortHumanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h`;
  if (hours < 24 * 365) return `${Math.floor(hours / 24)}d`;
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** EXPIRES as Velero prints it: time left (`29d`), `<d> ago` once passed, `n/a` when unknown. */
export function formatExpires(backup: Backup, now: Date): string {
  let expiration = backup.status?.expiration ? new Date(backup.status.expiration) : undefined;
  const created = creationTimestampOf(backup);
  if (!expiration && backup.spec.ttl && created) {
    const ttl = parseDurationNanos(backup.spec.ttl);
    if (ttl !== undefined && ttl > 0n) expiration = new Date(created.getTime() + Number(ttl / 1_000_000n));
  }
  if (!expiration || Number.isNaN(expiration.getTime())) return 'n/a';
  const diff = expiration.getTime() - now.getTime();
  return diff >= 0 ? shortHumanDuration(diff) : `${shortHumanDuration(-diff)} ago`;
}

/** The phase a user sees: `New` while unset, `Deleting` once deletion started. */
export function backupStatusText(backup: Backup): string {
  if (deletionTimestampOf(backup)) return 'Deleting';
  return backup.status?.phase ?? 'New';
}

export function backupColumns(now: Date = new Date()): readonly Column<Backup>[] {
  return [
    { header: 'name', value: (b) => b.metadata.name ?? '' },
    { header: 'status', value: backupStatusText },
    { header: 'errors', value: (b) => String(b.status?.errors ?? 0) },
    { header: 'warnings', value: (b) => String(b.status?.warnings ?? 0) },
    { header: 'created', value: (b) => formatGoTime(b.status?.startTimestamp) ?? '<nil>' },
    { header: 'expires', value: (b) => formatExpires(b, now) },
    { header: 'storage location', value: (b) => b.spec.storageLocation ?? '' },
    { header: 'selector', value: (b) => selectorText(b.spec.labelSelector) },
  ];
}

/** A label selector as Velero prints it (`<none>` when unset). */
export function selectorText(selector: object | null | undefined): string {
  return formatLabelSelector((selector ?? undefined) as LabelSelectorObject | undefined);
}

/** A file of the backup read through a DownloadRequest: its content, or why it is not there. */
export type Fetched<T> = { ok: true; value: T } | { ok: false; notFound: boolean; error: string };

/** `backup describe -o json|yaml`: one of these per backup (a List of them for several names). */
export interface BackupDescription {
  apiVersion: 'cairn.io/v1';
  kind: 'BackupDescription';
  /** The Backup object as the API server returned it. */
  backup: Backup;
  /** `<n>-results.gz`; null when the backup has no warnings or errors or the file is missing. */
  results: Results | null;
  /** PodVolumeBackups of this backup (fs-backup), possibly empty. */
  podVolumeBackups: PodVolumeBackup[];
  /** DataUploads of this backup (CSI snapshot data movement) still in the cluster; absent when there are none. */
  dataUploads?: DataUpload[];
  /** DeleteBackupRequests for this backup, possibly empty. */
  deleteBackupRequests: DeleteBackupRequest[];
  /** Only with --details: `<n>-resource-list.json.gz` and `<n>-volumeinfo.json.gz` (null when missing). */
  details?: {
    resourceList: Record<string, string[]> | null;
    volumeInfo: BackupVolumeInfo[] | null;
  };
}

/** A fetched JSON file validated with `parse`; a parse failure becomes a readable error, not an exception. */
export function parsedOperations<T>(fetched: Fetched<unknown>, parse: (v: unknown) => T): Fetched<T> {
  if (!fetched.ok) return fetched;
  try {
    return { ok: true, value: parse(fetched.value) };
  } catch (err) {
    return { ok: false, notFound: false, error: oneLine(err) };
  }
}

export function valueOr<T>(f: Fetched<T> | undefined): T | null {
  return f?.ok ? f.value : null;
}

/** The `--flag=true|false` spelling of the backup flags (BACKUP_TRI_STATE), as every command reads it. */
export { normaliseTriStateArgv } from './base-command.js';

/** Reads a gzip JSON file of a backup/restore through a DownloadRequest; a missing file is `notFound`, not an error. */
export async function fetchJson<T>(
  kube: Kube,
  opts: { namespace: string; kind: DownloadTargetKind; name: string; timeoutMs?: number; logger?: Logger },
): Promise<Fetched<T>> {
  try {
    const body = await fetchDownload(kube, { ...opts, gunzip: true });
    return { ok: true, value: JSON.parse(body.toString('utf8')) as T };
  } catch (err) {
    return { ok: false, notFound: err instanceof NotFoundError, error: oneLine(err) };
  }
}
