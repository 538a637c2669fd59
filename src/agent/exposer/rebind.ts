/**
 * The PV re-bind that ends a DataDownload (docs/data-mover.md), decided one step at a time from observed state so
 * that a node-agent restarted anywhere in it carries on: the restore PVC's volume holds the restored data; it must
 * end up bound to the workload's target PVC, which waits unbound with a selector (so no provisioner serves it).
 *
 *   record    the restored PV's name goes on the DD (the restore PVC, which names it, is deleted further on)
 *   retain    PV reclaimPolicy → Retain, the original kept in an annotation (deleting the restore PVC must not
 *             delete the volume)
 *   release   the restore pod and restore PVC are deleted; wait until the PV is Released
 *   hand-over one write: claimRef → the target PVC (namespace, name, uid), the label
 *             velero.io/dynamic-pv-restore=<target's selector value>
 *   bound     wait until the PV controller has bound the target PVC to it
 *   restore   the original reclaimPolicy back. Only now: a PV still Released with policy Delete is deleted by its
 *             provisioner, whatever its claimRef says
 *
 * Pure: the caller reads the objects, applies the step and asks again.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Labels } from '../../api/constants.js';

/** On the DataDownload: the PV the restore PVC was bound to, once the data mover has succeeded. */
export const RESTORED_PV_ANNOTATION = 'datadownload.cairn.io/restored-pv';
/** On the restored PV while it is held with Retain: the reclaimPolicy to put back. */
export const ORIGINAL_RECLAIM_POLICY_ANNOTATION = 'datadownload.cairn.io/original-reclaim-policy';
/** The PV controller's mark of a binding it made itself; without it the claimRef reads as set by a user (pre-bound). */
const BOUND_BY_CONTROLLER_ANNOTATION = 'pv.kubernetes.io/bound-by-controller';

export interface RebindState {
  /** The DD's RESTORED_PV_ANNOTATION. */
  recordedPv?: string | undefined;
  restorePvc?: V1PersistentVolumeClaim | undefined;
  restorePodExists: boolean;
  pv?: V1PersistentVolume | undefined;
  targetPvc?: V1PersistentVolumeClaim | undefined;
  /** `<namespace>/<name>` of the target PVC, for messages. */
  targetRef: string;
  cancel: boolean;
}

export type RebindStep =
  | { step: 'record'; pvName: string }
  | { step: 'retain'; pvName: string; originalPolicy: string }
  | { step: 'release'; deletePod: boolean; deletePvc: boolean }
  | { step: 'hand-over'; pv: V1PersistentVolume }
  | { step: 'restore-policy'; pv: V1PersistentVolume }
  | { step: 'wait'; why: string }
  | { step: 'done' }
  | { step: 'failed'; message: string }
  | { step: 'canceled'; message: string };

/** The target PVC's `velero.io/dynamic-pv-restore` selector value, if it has one. */
export function dynamicPvRestoreValue(pvc: V1PersistentVolumeClaim | undefined): string | undefined {
  return pvc?.spec?.selector?.matchLabels?.[Labels.DynamicPVRestore];
}

const handedOver = (pv: V1PersistentVolume, target: V1PersistentVolumeClaim) =>
  pv.spec?.claimRef?.uid !== undefined && pv.spec.claimRef.uid === target.metadata?.uid;

/** What the PV looks like after the hand-over to `target` (a copy; the input is not changed). */
export function handedOverPv(pv: V1PersistentVolume, target: V1PersistentVolumeClaim): V1PersistentVolume {
  const out = structuredClone(pv);
  const annotations = { ...(out.metadata?.annotations ?? {}) };
  delete annotations[BOUND_BY_CONTROLLER_ANNOTATION];
  const value = dynamicPvRestoreValue(target);
  out.metadata = { ...out.metadata, annotations, labels: { ...(out.metadata?.labels ?? {}), ...(value ? { [Labels.DynamicPVRestore]: value } : {}) } };
  out.spec = {
    ...out.spec,
    claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: target.metadata?.namespace ?? '', name: target.metadata?.name ?? '', uid: target.metadata?.uid ?? '' },
  };
  return out;
}

/** The PV with the reclaimPolicy it had before the re-bind and without the annotation that kept it (a copy). */
export function originalPolicyPv(pv: V1PersistentVolume): V1PersistentVolume {
  const out = structuredClone(pv);
  const annotations = { ...(out.metadata?.annotations ?? {}) };
  const original = annotations[ORIGINAL_RECLAIM_POLICY_ANNOTATION];
  delete annotations[ORIGINAL_RECLAIM_POLICY_ANNOTATION];
  out.metadata = { ...out.metadata, annotations };
  out.spec = { ...out.spec, ...(original ? { persistentVolumeReclaimPolicy: original } : {}) };
  return out;
}

export function nextRebindStep(s: RebindState): RebindStep {
  const target = s.targetPvc;
  if (!target || target.metadata?.deletionTimestamp) {
    return s.cancel ? { step: 'canceled', message: 'canceled before the restored volume was handed over' } : { step: 'failed', message: `target PVC ${s.targetRef} is gone` };
  }
  const pvName = s.recordedPv || s.restorePvc?.spec?.volumeName;
  if (!s.recordedPv) {
    if (s.cancel) return { step: 'canceled', message: 'canceled before the restored volume was handed over' };
    if (!pvName) return { step: 'failed', message: `restore PVC of ${s.targetRef} is ${s.restorePvc ? 'not bound' : 'gone'}: no restored volume to bind` };
    return { step: 'record', pvName };
  }
  const pv = s.pv;
  if (!pv) return { step: 'failed', message: `restored PV ${s.recordedPv} is gone` };
  if (handedOver(pv, target)) {
    if (pv.status?.phase !== 'Bound' || target.spec?.volumeName !== pv.metadata?.name) return { step: 'wait', why: `target PVC ${s.targetRef} is not bound to PV ${s.recordedPv} yet` };
    if (pv.metadata?.annotations?.[ORIGINAL_RECLAIM_POLICY_ANNOTATION] !== undefined) return { step: 'restore-policy', pv: originalPolicyPv(pv) };
    return { step: 'done' };
  }
  if (target.spec?.volumeName && target.spec.volumeName !== s.recordedPv) {
    return { step: 'failed', message: `target PVC ${s.targetRef} is already bound to PV ${target.spec.volumeName}` };
  }
  // Not handed over yet: a cancel still leaves the cluster as it was (cleanUp lets the volume go).
  if (s.cancel) return { step: 'canceled', message: 'canceled before the restored volume was handed over' };
  const original = pv.metadata?.annotations?.[ORIGINAL_RECLAIM_POLICY_ANNOTATION];
  if (!original) return { step: 'retain', pvName: s.recordedPv, originalPolicy: pv.spec?.persistentVolumeReclaimPolicy ?? 'Delete' };
  if (pv.spec?.persistentVolumeReclaimPolicy !== 'Retain') return { step: 'retain', pvName: s.recordedPv, originalPolicy: original };
  const restorePvcLeft = s.restorePvc !== undefined && !s.restorePvc.metadata?.deletionTimestamp;
  if (s.restorePodExists || restorePvcLeft) return { step: 'release', deletePod: s.restorePodExists, deletePvc: restorePvcLeft };
  if (pv.status?.phase !== 'Released') return { step: 'wait', why: `PV ${s.recordedPv} is ${pv.status?.phase ?? 'in no phase'}, not Released yet` };
  return { step: 'hand-over', pv: handedOverPv(pv, target) };
}
