/**
 * `restore create|get|delete`: building a Restore from Velero's flags (validated locally), the default restore name,
 * the `restore get` table and the JSON shape of `restore describe -o json|yaml` (documented in docs/cli.md).
 */
import {
  ExistingResourcePolicies,
  Kinds,
  creationTimestampOf,
  deletionTimestampOf,
  isValidDnsLabel,
  newRestore,
  parsePodVolumeRestore,
  parseDataDownload,
  parseRestore,
  type Backup,
  type PodVolumeRestore,
  type DataDownload,
  type Restore,
  type RestoreSpec,
} from '../api/index.js';
import { UsageError } from '../base/errors.js';
import type { Column } from './output.js';
import { checkObjectName, filterSpec, formatGoTime, parseKeyValues, selectorSpec, selectorText, splitList, type TriState } from './backups.js';
import { customClient, type CustomClient } from '../kube/custom.js';
import type { Kube } from '../kube/client.js';
import type { Results } from '../api/results.js';
import type { RestoreVolumeInfo } from '../api/volume-info.js';

export function restoreClient(kube: Kube): CustomClient<Restore> {
  return customClient<Restore>(kube, Kinds.Restore, parseRestore);
}

export function podVolumeRestoreClient(kube: Kube): CustomClient<PodVolumeRestore> {
  return customClient<PodVolumeRestore>(kube, Kinds.PodVolumeRestore, parsePodVolumeRestore);
}

export function dataDownloadClient(kube: Kube): CustomClient<DataDownload> {
  return customClient<DataDownload>(kube, Kinds.DataDownload, parseDataDownload);
}

export interface RestoreCreateFlags {
  /** The restore's name; default `<backup>-<YYYYMMDDHHMMSS>`. */
  name?: string | undefined;
  namespace: string;
  /** Exactly one of the two sources. */
  'from-backup'?: string | undefined;
  'from-schedule'?: string | undefined;
  'include-namespaces'?: string | undefined;
  'exclude-namespaces'?: string | undefined;
  'include-resources'?: string | undefined;
  'exclude-resources'?: string | undefined;
  'include-cluster-resources'?: TriState;
  'namespace-mappings'?: string | undefined;
  'existing-resource-policy'?: string | undefined;
  selector?: string | undefined;
  'or-selector'?: string | undefined;
  'restore-volumes'?: TriState;
  'preserve-nodeports'?: TriState;
  'resource-modifier-configmap'?: string | undefined;
  labels?: string | undefined;
  annotations?: string | undefined;
}

/** `<backup>-<YYYYMMDDHHMMSS>` (UTC), Velero's default restore name. */
export function defaultRestoreName(backup: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${backup}-${stamp}`;
}

/** `a:b,c:d` → {a: 'b', c: 'd'}; every side a valid namespace name, each source once. */
export function parseNamespaceMappings(flag: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of splitList(text)) {
    const parts = pair.split(':').map((s) => s.trim());
    if (parts.length !== 2 || !parts[0] || !parts[1]) throw new UsageError(flag, `"${pair}" is not source:target`);
    const [from, to] = parts as [string, string];
    for (const ns of [from, to]) if (!isValidDnsLabel(ns)) throw new UsageError(flag, `"${ns}" is not a valid namespace name`);
    if (from in out) throw new UsageError(flag, `namespace "${from}" mapped twice`);
    out[from] = to;
  }
  if (!Object.keys(out).length) throw new UsageError(flag, 'no mapping given (expected source:target,...)');
  return out;
}

/** Builds the Restore `restore create` submits; throws UsageError naming the flag for any bad input. */
export function buildRestore(flags: RestoreCreateFlags, now: Date = new Date()): Restore {
  const fromBackup = flags['from-backup'];
  const fromSchedule = flags['from-schedule'];
  if (fromBackup && fromSchedule) throw new UsageError('--from-schedule', 'cannot be combined with --from-backup: a restore has one source');
  const [sourceFlag, source] = fromSchedule ? ['--from-schedule', fromSchedule] : ['--from-backup', fromBackup ?? ''];
  checkObjectName(sourceFlag, fromSchedule ? 'schedule' : 'backup', source);
  const name = flags.name ?? defaultRestoreName(source, now);
  checkObjectName(flags.name ? 'NAME' : sourceFlag, 'restore', name);
  // From a schedule the server picks its latest Completed backup and writes it into spec.backupName.
  const spec: RestoreSpec = { ...(fromSchedule ? { scheduleName: fromSchedule } : { backupName: source }), ...filterSpec(flags, /^[a-z0-9*?[\]!-]+$/) };
  if (flags['namespace-mappings'] !== undefined) spec.namespaceMapping = parseNamespaceMappings('--namespace-mappings', flags['namespace-mappings']);
  const policy = flags['existing-resource-policy'];
  if (policy !== undefined) {
    if (!(ExistingResourcePolicies as readonly string[]).includes(policy)) {
      throw new UsageError('--existing-resource-policy', `"${policy}" is not one of ${ExistingResourcePolicies.join(', ')}`);
    }
    spec.existingResourcePolicy = policy;
  }
  Object.assign(spec, selectorSpec(flags));
  if (flags['restore-volumes'] !== undefined) spec.restorePVs = flags['restore-volumes'];
  if (flags['preserve-nodeports'] !== undefined) spec.preserveNodePorts = flags['preserve-nodeports'];
  if (flags['resource-modifier-configmap']) spec.resourceModifier = { kind: 'configmap', name: checkObjectName('--resource-modifier-configmap', 'ConfigMap', flags['resource-modifier-configmap']) };
  const labels = flags.labels ? parseKeyValues('--labels', flags.labels) : undefined;
  const annotations = flags.annotations ? parseKeyValues('--annotations', flags.annotations) : undefined;
  return newRestore({ namespace: flags.namespace, name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}), spec });
}

/** Backups a restore can start from: Completed or PartiallyFailed and not being deleted, newest first. */
export function restorableBackups(backups: readonly Backup[]): Backup[] {
  return backups
    .filter((b) => (b.status?.phase === 'Completed' || b.status?.phase === 'PartiallyFailed') && !deletionTimestampOf(b))
    .sort((a, b) => (b.status?.startTimestamp ?? '').localeCompare(a.status?.startTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

export function restoreStatusText(restore: Restore): string {
  return restore.status?.phase ?? 'New';
}

export function restoreColumns(): readonly Column<Restore>[] {
  return [
    { header: 'name', value: (r) => r.metadata.name ?? '' },
    { header: 'backup', value: (r) => r.spec.backupName ?? '' },
    { header: 'status', value: restoreStatusText },
    { header: 'started', value: (r) => formatGoTime(r.status?.startTimestamp) ?? '<nil>' },
    { header: 'completed', value: (r) => formatGoTime(r.status?.completionTimestamp) ?? '<nil>' },
    { header: 'errors', value: (r) => String(r.status?.errors ?? 0) },
    { header: 'warnings', value: (r) => String(r.status?.warnings ?? 0) },
    { header: 'created', value: (r) => formatGoTime(creationTimestampOf(r)) ?? '<nil>' },
    { header: 'selector', value: (r) => selectorText(r.spec.labelSelector) },
  ];
}

/** `restore describe -o json|yaml`: one of these per restore (a List of them for several names). */
export interface RestoreDescription {
  apiVersion: 'cairn.io/v1';
  kind: 'RestoreDescription';
  restore: Restore;
  /** `restore-<n>-results.gz`; null when the restore has no warnings or errors or the file is missing. */
  results: Results | null;
  podVolumeRestores: PodVolumeRestore[];
  /** The restore's DataDownloads (data-mover volumes), live from the cluster. */
  dataDownloads?: DataDownload[];
  /** `<n>-volumeinfo.json.gz` of the restore; null when missing. */
  volumeInfo: RestoreVolumeInfo[] | null;
  /** Only with --details: `restore-<n>-resource-list.json.gz` (null when missing). */
  details?: { resourceList: Record<string, string[]> | null };
}
