/**
 * The end of a restore that started pod volume restores or data downloads: `WaitingForPluginOperations(PartiallyFailed)`
 * while the PodVolumeRestores and DataDownloads run, then `Finalizing(PartiallyFailed)`, where the restore's files
 * are completed — their errors (`pod volume restore failed: <msg>`, `data download of persistent volume claim
 * <ns>/<name> failed ...`) added to the results, one RestoreVolumeInfo per PVR and per DataDownload, the item
 * operations with their outcome, a few lines appended to the log, the reclaim policy and labels of PVs provisioned
 * anew for fs-backup and data-mover claims set back to the backed-up ones — and finally `Completed` or
 * `PartiallyFailed`. Every step reads its inputs from the cluster and the storage location again, so a server
 * restart in any of these phases just carries on.
 */
import type { DataDownload, PodVolumeRestore, Restore } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { checkDataDownloads, type DataDownloadWaitState } from '../datamover/restore-wait.js';
import { dataDownloadOperations, restoreVolumeInfoForDataDownload } from '../datamover/restore-tracking.js';
import { podVolumeRestoreOperations } from '../podvolume/restore-operations.js';
import { checkPodVolumeRestores, type CheckPodVolumeRestoresOptions, type PodVolumeRestoreWaitState } from '../podvolume/restore-wait.js';
import { ResultsCollector, type Result, type Results } from '../../api/results.js';
import type { BackupStore } from '../../storage/backup-store.js';
import { gunzipText } from '../../storage/encoding.js';
import { restoreVolumeInfoForPodVolumeRestore, type RestoreVolumeInfo } from '../../api/volume-info.js';
import { parseVolumeInfos } from '../../api/volume-info.js';
import { createRestoreLog } from './restore-log.js';
import { patchRestoredPvs, reboundVolume } from './restore-pv-patch.js';

export type PodVolumeWaitOptions = CheckPodVolumeRestoresOptions;

export function waitForPodVolumes(opts: PodVolumeWaitOptions): Promise<PodVolumeRestoreWaitState> {
  return checkPodVolumeRestores(opts);
}

/** Where a restore's item operations (PVRs and DataDownloads) stand, from one look at the cluster. */
export interface RestoreOperationsState {
  podVolumes: PodVolumeRestoreWaitState;
  dataDownloads: DataDownloadWaitState;
  attempted: number;
  completed: number;
  failed: number;
  /** True when nothing is still being waited for. */
  done: boolean;
  errors: string[];
}

export function combineOperations(podVolumes: PodVolumeRestoreWaitState, dataDownloads: DataDownloadWaitState): RestoreOperationsState {
  return {
    podVolumes,
    dataDownloads,
    attempted: podVolumes.podVolumeRestores.length + dataDownloads.dataDownloads.length,
    completed: podVolumes.completed + dataDownloads.completed,
    failed: podVolumes.failed + dataDownloads.failed,
    done: podVolumes.done && dataDownloads.done,
    errors: [...podVolumes.errors, ...dataDownloads.errors],
  };
}

export async function waitForOperations(opts: PodVolumeWaitOptions): Promise<RestoreOperationsState> {
  const podVolumes = await checkPodVolumeRestores(opts);
  const dataDownloads = await checkDataDownloads(opts);
  return combineOperations(podVolumes, dataDownloads);
}

/** A collector holding what a stored results file says (so more can be added before it is written again). */
export function resultsFrom(stored: unknown): ResultsCollector {
  const collector = new ResultsCollector();
  const r = (stored ?? {}) as Partial<Results>;
  const each = (res: Result | undefined, add: (scope: Parameters<ResultsCollector['warn']>[0], m: string) => void) => {
    for (const m of res?.velero ?? []) add({ kind: 'velero' }, m);
    for (const m of res?.cluster ?? []) add({ kind: 'cluster' }, m);
    for (const [namespace, list] of Object.entries(res?.namespaces ?? {})) for (const m of list) add({ kind: 'namespace', namespace }, m);
  };
  each(r.warnings, (s, m) => collector.warn(s, m));
  each(r.errors, (s, m) => collector.error(s, m));
  return collector;
}

async function claimOfPodVolume(kube: Kube, pvr: PodVolumeRestore): Promise<string | undefined> {
  try {
    const pod = await kube.core.readNamespacedPod({ name: pvr.spec.pod.name ?? '', namespace: pvr.spec.pod.namespace ?? '' });
    return pod.spec?.volumes?.find((v) => v.name === pvr.spec.volume)?.persistentVolumeClaim?.claimName;
  } catch {
    return undefined;
  }
}

/** One entry per PVR, ordered by pod namespace, pod name and volume so the file is stable. */
export async function restoreVolumeInfos(kube: Kube, pvrs: readonly PodVolumeRestore[]): Promise<RestoreVolumeInfo[]> {
  const key = (p: PodVolumeRestore) => `${p.spec.pod.namespace ?? ''}/${p.spec.pod.name ?? ''}/${p.spec.volume}`;
  const out: RestoreVolumeInfo[] = [];
  for (const pvr of [...pvrs].sort((a, b) => key(a).localeCompare(key(b)))) out.push(restoreVolumeInfoForPodVolumeRestore(pvr, await claimOfPodVolume(kube, pvr)));
  return out;
}

/** The claim a DataDownload restored into is bound to this volume (the node agent set its claimRef), if known. */
async function volumeOfDataDownload(kube: Kube, dd: DataDownload): Promise<string | undefined> {
  try {
    const pvc = await kube.core.readNamespacedPersistentVolumeClaim({ name: dd.spec.targetVolume.pvc, namespace: dd.spec.targetVolume.namespace });
    return pvc.spec?.volumeName || (await reboundVolume(kube, pvc));
  } catch {
    return undefined;
  }
}

/** One entry per DataDownload, ordered by claim namespace and name. */
export async function dataDownloadVolumeInfos(kube: Kube, dds: readonly DataDownload[]): Promise<RestoreVolumeInfo[]> {
  const key = (d: DataDownload) => `${d.spec.targetVolume.namespace}/${d.spec.targetVolume.pvc}`;
  const out: RestoreVolumeInfo[] = [];
  for (const dd of [...dds].sort((a, b) => key(a).localeCompare(key(b)))) out.push(restoreVolumeInfoForDataDownload(dd, await volumeOfDataDownload(kube, dd)));
  return out;
}

function notRestoredEntries(stored: unknown): RestoreVolumeInfo[] {
  return Array.isArray(stored) ? stored.filter((v): v is RestoreVolumeInfo => typeof v === 'object' && v !== null && typeof (v as RestoreVolumeInfo).notRestored === 'string') : [];
}

export interface FinalizeOptions {
  kube: Kube;
  namespace: string;
  restore: Restore;
  store: BackupStore;
  /** The PVRs and DataDownloads as the wait ended (all finished or given up on). */
  state: RestoreOperationsState;
  serverLog: Logger;
}

export interface FinalizeResult {
  warnings: number;
  errors: number;
}

const LOG_MARKER = 'Restore item operations finished';

/** Completes the restore's files in storage; returns the final counts. */
export async function finalizeRestoreFiles(opts: FinalizeOptions): Promise<FinalizeResult> {
  const name = opts.restore.metadata.name ?? '';
  const results = resultsFrom(await opts.store.getRestoreJson(name, 'results'));
  const already = new Set(results.toJSON().errors.velero ?? []);
  for (const error of opts.state.errors) if (!already.has(error)) results.error({ kind: 'velero' }, error);
  const backupName = opts.restore.spec.backupName ?? '';
  const pvs = await patchRestoredPvs({ kube: opts.kube, restore: opts.restore, volumeInfos: parseVolumeInfos(await opts.store.getBackupJson(backupName, 'volumeInfo')) });
  const warned = new Set(results.toJSON().warnings.velero ?? []);
  for (const warning of pvs.warnings) if (!warned.has(warning)) results.warn({ kind: 'velero' }, warning);

  const previous = await opts.store.getDownload('RestoreLog', name).then((b) => (b ? gunzipText(b) : ''));
  let logText = previous;
  // Lines are appended once, even if a restart makes this run twice.
  if (!previous.includes(LOG_MARKER)) {
    const rlog = createRestoreLog({ restore: `${opts.restore.metadata.namespace ?? ''}/${name}`, server: opts.serverLog });
    for (const pvr of opts.state.podVolumes.podVolumeRestores) {
      const phase = pvr.status?.phase ?? 'New';
      const line = `PodVolumeRestore ${pvr.metadata?.name ?? ''} (volume ${pvr.spec.volume} of pod ${pvr.spec.pod.namespace ?? ''}/${pvr.spec.pod.name ?? ''}): ${phase}`;
      if (phase === 'Completed') rlog.logger.info(line);
      else rlog.logger.error(`${line}${pvr.status?.message ? `: ${pvr.status.message}` : ''}`);
    }
    for (const dd of opts.state.dataDownloads.dataDownloads) {
      const phase = dd.status?.phase ?? 'New';
      const line = `DataDownload ${dd.metadata?.name ?? ''} (persistent volume claim ${dd.spec.targetVolume.namespace}/${dd.spec.targetVolume.pvc}): ${phase}`;
      if (phase === 'Completed') rlog.logger.info(line);
      else rlog.logger.error(`${line}${dd.status?.message ? `: ${dd.status.message}` : ''}`);
    }
    for (const error of opts.state.errors) rlog.logger.error(error);
    for (const pv of pvs.patched) rlog.logger.info(`Restored the reclaim policy and labels of persistent volume ${pv} from the backup`);
    for (const warning of pvs.warnings) rlog.logger.warn(warning);
    const pvrs = opts.state.podVolumes;
    const dds = opts.state.dataDownloads;
    if (pvrs.podVolumeRestores.length) rlog.logger.info(`Pod volume restores finished: ${pvrs.completed} completed, ${pvrs.failed} failed`);
    if (dds.dataDownloads.length) rlog.logger.info(`Data downloads finished: ${dds.completed} completed, ${dds.failed} failed`);
    rlog.logger.info(`${LOG_MARKER}: ${opts.state.completed} completed, ${opts.state.failed} failed`);
    logText = previous + rlog.text();
  }

  await opts.store.putRestoreFiles(name, {
    log: logText,
    results: results.toJSON(),
    itemOperations: [...podVolumeRestoreOperations(opts.restore, opts.state.podVolumes.podVolumeRestores), ...dataDownloadOperations(opts.restore, opts.state.dataDownloads.dataDownloads)],
    volumeInfo: [
      ...(await restoreVolumeInfos(opts.kube, opts.state.podVolumes.podVolumeRestores)),
      ...(await dataDownloadVolumeInfos(opts.kube, opts.state.dataDownloads.dataDownloads)),
      // Volumes whose backup failed, recorded when the items were restored.
      ...notRestoredEntries(await opts.store.getRestoreJson(name, 'volumeInfo')),
    ],
  });
  return { warnings: results.warningCount, errors: results.errorCount };
}
