/**
 * After the data is back (Finalizing), the volumes provisioned anew for fs-backup and CSI (data-mover) claims get the
 * reclaim policy and labels their PV had at backup time (Velero's restore finalizer, `patchDynamicPVWithVolumeInfo`):
 * a new PV carries the StorageClass's policy, which may be Delete where the original was Retain. Only claims this
 * restore created are touched. A data-mover claim the PV controller has not bound yet is found through the volume
 * the node agent re-bound to it (label `velero.io/dynamic-pv-restore`, claimRef the claim's UID); any other claim
 * that is not bound yet is reported and left alone.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Labels, labelValue, type Restore } from '../../api/index.js';
import type { Kube } from '../../kube/client.js';
import { DynamicClient } from './dynamic-client.js';
import type { StoredBackupVolumeInfo } from '../../api/volume-info.js';
import { NamespaceMapping } from './namespace-mapping.js';

export interface PatchRestoredPvsOptions {
  kube: Kube;
  restore: Restore;
  volumeInfos: readonly StoredBackupVolumeInfo[];
}

export interface PatchRestoredPvsResult {
  patched: string[];
  /** Problems, one line each (reported as warnings). */
  warnings: string[];
}

/** What to change on a PV so it matches the backed-up one, or undefined when it already does. */
export function pvPatchFor(
  current: { reclaimPolicy?: string; labels?: Record<string, string> },
  wanted: { reclaimPolicy?: string; labels?: Record<string, string> | null },
): { spec?: { persistentVolumeReclaimPolicy: string }; metadata?: { labels: Record<string, string> } } | undefined {
  const patch: { spec?: { persistentVolumeReclaimPolicy: string }; metadata?: { labels: Record<string, string> } } = {};
  if (wanted.reclaimPolicy && wanted.reclaimPolicy !== current.reclaimPolicy) patch.spec = { persistentVolumeReclaimPolicy: wanted.reclaimPolicy };
  const missing = Object.entries(wanted.labels ?? {}).filter(([k, v]) => current.labels?.[k] !== v);
  if (missing.length) patch.metadata = { labels: Object.fromEntries(missing) };
  return patch.spec || patch.metadata ? patch : undefined;
}

/** The volume the node agent re-bound to a data-mover claim, before the PV controller has completed the binding. */
export async function reboundVolume(kube: Kube, pvc: V1PersistentVolumeClaim): Promise<string | undefined> {
  const value = pvc.spec?.selector?.matchLabels?.[Labels.DynamicPVRestore];
  if (!value) return undefined;
  const pvs = await kube.core.listPersistentVolume({ labelSelector: `${Labels.DynamicPVRestore}=${value}` });
  return pvs.items.find((pv) => pv.spec?.claimRef?.uid === pvc.metadata?.uid)?.metadata?.name;
}

export async function patchRestoredPvs(opts: PatchRestoredPvsOptions): Promise<PatchRestoredPvsResult> {
  const out: PatchRestoredPvsResult = { patched: [], warnings: [] };
  const mapping = NamespaceMapping.of(opts.restore);
  const restoreLabel = labelValue(opts.restore.metadata.name ?? '');
  for (const info of opts.volumeInfos) {
    if ((info.backupMethod !== 'PodVolumeBackup' && info.backupMethod !== 'CSISnapshot') || !info.pvInfo || !info.pvcName || !info.pvcNamespace) continue;
    const namespace = mapping.target(info.pvcNamespace);
    let pvc;
    try {
      pvc = await opts.kube.core.readNamespacedPersistentVolumeClaim({ name: info.pvcName, namespace });
    } catch {
      continue; // not restored (filtered out, or failed and reported already)
    }
    if (pvc.metadata?.labels?.[Labels.RestoreName] !== restoreLabel) continue;
    const pvName = pvc.spec?.volumeName || (await reboundVolume(opts.kube, pvc));
    if (!pvName) {
      out.warnings.push(`persistent volume claim ${namespace}/${info.pvcName} is not bound; the reclaim policy and labels of its volume were not restored`);
      continue;
    }
    try {
      const pv = await opts.kube.core.readPersistentVolume({ name: pvName });
      const patch = pvPatchFor({ reclaimPolicy: pv.spec?.persistentVolumeReclaimPolicy, labels: pv.metadata?.labels ?? {} }, info.pvInfo);
      if (!patch) continue;
      await new DynamicClient(opts.kube).mergePatch({ apiVersion: 'v1', kind: 'PersistentVolume', name: pvName }, patch);
      out.patched.push(pvName);
    } catch (err) {
      out.warnings.push(`could not restore the reclaim policy and labels of persistent volume ${pvName} (claim ${namespace}/${info.pvcName}): ${(err as Error).message}`);
    }
  }
  return out;
}
