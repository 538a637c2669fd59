/**
 * The generic restore exposer (restore side of snapshot data movement, docs/data-mover.md). For a DataDownload it
 * makes a restore PVC in the install namespace (name = DD name) shaped like the target PVC but without its selector,
 * and the restore pod writing into it, required to run on the claiming node (placed there by name when that is the
 * node the target's workload was scheduled to); both idempotently. Once the data mover
 * has succeeded, `rebind` moves the restored PV over to the target PVC, one observed-state step per call (rebind.ts).
 * `cleanUp` deletes the pod and the restore PVC, and lets go of a restored PV this DD still holds with Retain.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { Annotations, type DataDownload } from '../../api/index.js';
import { call } from '../../kube/client.js';
import { undefinedIfNotFound } from '../../kube/errors.js';
import type { BeforeCompletedStep } from '../controllers/data-path-controller.js';
import { ownerOf, podFor, volumeModeOf, type DataMoverExposer, type DataMoverExposerOptions } from './csi-snapshot-exposer.js';
import { deleteOwnedPod, deleteOwnedPodAndPvc, deleteOwnedPvc, ensurePod, ensurePvc, readPod, readPvc } from './exposed-objects.js';
import { ORIGINAL_RECLAIM_POLICY_ANNOTATION, RESTORED_PV_ANNOTATION, nextRebindStep, originalPolicyPv } from './rebind.js';
import { isOwnedBy, restorePvc } from './snapshot-objects.js';

export interface GenericRestoreExposer extends DataMoverExposer<DataDownload> {
  /** One turn of the re-bind; `recordPv` writes the PV's name on the DD (the caller owns DD writes). */
  rebind(dd: DataDownload, recordPv: (pvName: string) => Promise<void>): Promise<BeforeCompletedStep>;
}

export const targetRefOf = (dd: DataDownload) => `${dd.spec.targetVolume.namespace}/${dd.spec.targetVolume.pvc}`;

/** How often a re-bind waiting on the PV controller (Released, Bound) looks again. */
const PV_CONTROLLER_POLL_MS = 500;
/** Steps taken in one go before the re-bind goes back to the queue (the whole re-bind is 6 at most). */
const MAX_STEPS_PER_TURN = 8;

export function createGenericRestoreExposer(opts: DataMoverExposerOptions): GenericRestoreExposer {
  const { kube, namespace } = opts;
  const log = opts.logger.child({ exposer: 'generic-restore' });

  async function readPv(name: string): Promise<V1PersistentVolume | undefined> {
    return call(kube, `get PV ${name}`, () => undefinedIfNotFound(() => kube.core.readPersistentVolume({ name })));
  }

  async function writePv(pv: V1PersistentVolume): Promise<void> {
    await call(kube, `update PV ${pv.metadata?.name ?? ''}`, () => kube.core.replacePersistentVolume({ name: pv.metadata?.name ?? '', body: pv }));
  }

  /**
   * Puts back the reclaimPolicy of a PV this DD still holds with Retain (a re-bind that failed or was canceled):
   * one never handed over is then deleted with its restore PVC as the class says; one bound to the target keeps
   * serving it.
   */
  async function releaseHeldPv(dd: DataDownload): Promise<void> {
    const pvName = dd.metadata.annotations?.[RESTORED_PV_ANNOTATION];
    if (!pvName) return;
    const pv = await readPv(pvName);
    const original = pv?.metadata?.annotations?.[ORIGINAL_RECLAIM_POLICY_ANNOTATION];
    if (!pv || !original) return;
    await writePv(originalPolicyPv(pv));
    log.info({ DD: dd.metadata.name, pv: pvName, reclaimPolicy: original }, 'restored PV let go');
  }

  return {
    async expose(dd) {
      const owner = ownerOf(dd, 'DataDownload', namespace);
      const existingPod = await readPod(kube, namespace, owner.name);
      if (existingPod && isOwnedBy(existingPod.metadata, owner)) return { ready: true };
      const targetPvc = await readPvc(kube, dd.spec.targetVolume.namespace, dd.spec.targetVolume.pvc);
      if (!targetPvc) throw new Error(`target PVC ${targetRefOf(dd)} not found`);
      // A claim bound already (made without the selector, so provisioned) could never get the restored volume.
      if (targetPvc.spec?.volumeName) throw new Error(`target PVC ${targetRefOf(dd)} is already bound to PV ${targetPvc.spec.volumeName}`);
      // Claimed on the node the target's workload was scheduled to (a WaitForFirstConsumer class, data-download.ts):
      // the pod goes there by name, as Velero's does, so a taint the workload tolerates does not keep it off.
      const pinned = targetPvc.metadata?.annotations?.[Annotations.SelectedNode] === opts.nodeName;
      const pvc = await ensurePvc(kube, owner, restorePvc({ owner, targetPvc, ...(pinned ? { selectedNode: opts.nodeName } : {}) }));
      await ensurePod(kube, owner, podFor(opts, owner, volumeModeOf(pvc.spec?.volumeMode), pinned ? { pinned: true } : {}));
      log.info({ DD: owner.name, pvc: `${namespace}/${owner.name}`, pod: `${namespace}/${owner.name}`, target: targetRefOf(dd), node: opts.nodeName }, 'restore PVC and pod created');
      return { ready: true };
    },
    getExposed: (name) => readPod(kube, namespace, name),
    async cleanUp(dd) {
      const owner = ownerOf(dd, 'DataDownload', namespace);
      await deleteOwnedPodAndPvc(kube, owner);
      await releaseHeldPv(dd);
      log.debug({ DD: owner.name }, 'exposed objects deleted');
    },
    async rebind(dd, recordPv) {
      // Steps that act are followed at once by the next one; only a wait on the PV controller goes back to the queue.
      let recordedPv = dd.metadata.annotations?.[RESTORED_PV_ANNOTATION];
      for (let turn = 0; ; turn++) {
        const result = await rebindOnce(dd, recordedPv, async (pvName) => {
          await recordPv(pvName);
          recordedPv = pvName;
        });
        if (!('acted' in result) || turn >= MAX_STEPS_PER_TURN) return result.step;
      }
    },
  };

  /** One re-bind step; `acted` when it changed something (the next step can follow at once). */
  async function rebindOnce(dd: DataDownload, recordedPv: string | undefined, recordPv: (pvName: string) => Promise<void>): Promise<{ step: BeforeCompletedStep; acted?: true }> {
    const owner = ownerOf(dd, 'DataDownload', namespace);
    const restore = await readPvc(kube, namespace, owner.name);
    const restorePod = await readPod(kube, namespace, owner.name);
    const step = nextRebindStep({
      recordedPv,
      restorePvc: restore && isOwnedBy(restore.metadata, owner) ? restore : undefined,
      restorePodExists: restorePod !== undefined && isOwnedBy(restorePod.metadata, owner) && !restorePod.metadata?.deletionTimestamp,
      pv: recordedPv ? await readPv(recordedPv) : undefined,
      targetPvc: await readPvc(kube, dd.spec.targetVolume.namespace, dd.spec.targetVolume.pvc),
      targetRef: targetRefOf(dd),
      cancel: dd.spec.cancel === true,
    });
    const fields = { DD: owner.name, target: targetRefOf(dd), step: step.step };
    const acted = (why: string) => ({ step: { outcome: 'wait', why } as const, acted: true as const });
    switch (step.step) {
      case 'record':
        await recordPv(step.pvName);
        log.info({ ...fields, pv: step.pvName }, 're-bind: restored PV recorded');
        return acted('restored PV recorded');
      case 'retain': {
        const pv = await readPv(step.pvName);
        if (!pv) return { step: { outcome: 'wait', why: `PV ${step.pvName} not found`, retryAfterMs: PV_CONTROLLER_POLL_MS } };
        pv.metadata = { ...pv.metadata, annotations: { ...(pv.metadata?.annotations ?? {}), [ORIGINAL_RECLAIM_POLICY_ANNOTATION]: step.originalPolicy } };
        pv.spec = { ...pv.spec, persistentVolumeReclaimPolicy: 'Retain' };
        await writePv(pv);
        log.info({ ...fields, pv: step.pvName, originalPolicy: step.originalPolicy }, 're-bind: restored PV set to Retain');
        return acted('restored PV set to Retain');
      }
      case 'release':
        if (step.deletePod) await deleteOwnedPod(kube, owner);
        if (step.deletePvc) await deleteOwnedPvc(kube, owner);
        log.info(fields, 're-bind: restore pod and PVC deleted');
        return acted('restore pod and PVC deleted');
      case 'hand-over':
        await writePv(step.pv);
        log.info({ ...fields, pv: step.pv.metadata?.name }, 're-bind: restored PV handed over to the target PVC');
        return acted('restored PV handed over');
      case 'restore-policy':
        await writePv(step.pv);
        log.info({ ...fields, pv: step.pv.metadata?.name, reclaimPolicy: step.pv.spec?.persistentVolumeReclaimPolicy }, 're-bind: target PVC bound; reclaim policy put back');
        return acted('reclaim policy put back');
      case 'wait':
        return { step: { outcome: 'wait', why: step.why, retryAfterMs: PV_CONTROLLER_POLL_MS } };
      case 'done':
        log.info(fields, 're-bind: done');
        return { step: { outcome: 'done' } };
      case 'failed':
        return { step: { outcome: 'failed', message: `error to rebind the restored volume: ${step.message}` } };
      case 'canceled':
        return { step: { outcome: 'canceled', message: step.message } };
    }
  }
}
