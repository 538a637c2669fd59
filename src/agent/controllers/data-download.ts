/**
 * The node-agent's DataDownload controller (snapshot data movement, restore side; docs/data-mover.md): a node-agent
 * may claim a New DataDownload of the built-in data mover once its target PVC exists (until then it waits, within the
 * prepare timeout counted from the DD's creation): for a target whose class binds WaitForFirstConsumer, only the
 * agent of the node the workload was scheduled to (unless `restorePVC.ignoreDelayBinding`), otherwise any agent whose
 * node the load affinity allows. The generic restore exposer makes a restore PVC and pod; when the data mover has
 * succeeded, the restored PV is re-bound to the target PVC before the DD is Completed (a failed re-bind fails it).
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { realTimerClock } from '../../base/clock.js';
import { Annotations, Finalizers } from '../../api/constants.js';
import { Kinds, creationTimestampOf, parseDataDownload, type DataDownload } from '../../api/index.js';
import { customClient } from '../../kube/custom.js';
import { loadAffinityFor, type LoadAffinity } from '../config.js';
import { readBindingMode, readPvc } from '../exposer/exposed-objects.js';
import { targetRefOf, type GenericRestoreExposer } from '../exposer/generic-restore-exposer.js';
import { RESTORED_PV_ANNOTATION } from '../exposer/rebind.js';
import { createDataPathController, type DataPathController, type DataPathControllerContext, type DataPathKindSpec } from './data-path-controller.js';
import { AFFINITY_WAIT_RETRY_MS, loadAffinityDecision, type AcceptDecision } from './data-path-decisions.js';
import { isBuiltInDataMover } from './data-upload.js';

export interface DataDownloadControllerContext extends DataPathControllerContext {
  exposer: GenericRestoreExposer;
  /** The node agent's `restorePVC.ignoreDelayBinding`: restore a WaitForFirstConsumer target on any node. */
  ignoreDelayBinding?: boolean;
}

const TARGET_WAIT_RETRY_MS = 3000;

/** Claim once the target PVC exists; after the prepare timeout claim anyway, so the expose fails it with a reason. */
export function targetPvcDecision(opts: { targetExists: boolean; createdAt: Date | undefined; now: Date; prepareTimeoutMs: number; targetRef: string }): AcceptDecision {
  if (opts.targetExists) return { accept: true };
  const waited = opts.createdAt ? opts.now.getTime() - opts.createdAt.getTime() : 0;
  if (waited >= opts.prepareTimeoutMs) return { accept: true };
  return { accept: false, retryAfterMs: TARGET_WAIT_RETRY_MS, why: `target PVC ${opts.targetRef} does not exist yet` };
}

/**
 * Velero's default for a target PVC whose class binds WaitForFirstConsumer (`restorePVC.ignoreDelayBinding` false or
 * unset): its volume is restored on the node the scheduler chose for the first pod using the claim (the claim's
 * `volume.kubernetes.io/selected-node`), so a volume tied to a node is made where its workload will run. Only the node
 * agent of that node claims it, whatever the load affinity (Velero runs the restore pod on that node by name). Until a
 * pod using the claim is scheduled it waits; past the prepare timeout it fails unclaimed with the reason.
 */
export function selectedNodeDecision(opts: { selectedNode: string | undefined; node: string; createdAt: Date | undefined; now: Date; prepareTimeoutMs: number; targetRef: string }): AcceptDecision {
  const { selectedNode, targetRef } = opts;
  if (selectedNode === opts.node) return { accept: true };
  const timedOut = (opts.createdAt ? opts.now.getTime() - opts.createdAt.getTime() : 0) >= opts.prepareTimeoutMs;
  const timeout = `${Math.round(opts.prepareTimeoutMs / 1000)}s`;
  if (!selectedNode) {
    const why = `target PVC ${targetRef} binds on its first consumer and no pod using it is scheduled yet`;
    if (!timedOut) return { accept: false, retryAfterMs: TARGET_WAIT_RETRY_MS, why };
    const fail =
      `no pod using target PVC ${targetRef} (WaitForFirstConsumer) was scheduled within the prepare timeout (${timeout}); ` +
      `restorePVC.ignoreDelayBinding: true in the node agent's ConfigMap restores such a volume on any node`;
    return { accept: false, why, fail };
  }
  const why = `target PVC ${targetRef} is restored on node ${selectedNode}, where its workload was scheduled`;
  if (!timedOut) return { accept: false, retryAfterMs: AFFINITY_WAIT_RETRY_MS, why };
  return { accept: false, why, fail: `no node agent on node ${selectedNode}, where the workload of target PVC ${targetRef} was scheduled, took it within the prepare timeout (${timeout})` };
}

/** Who may claim a DataDownload whose target PVC exists: the workload's node (above), else the load affinity's. */
export function dataDownloadAcceptDecision(opts: {
  target: V1PersistentVolumeClaim;
  /** The target's class's volumeBindingMode (undefined: no class, or none read because delay binding is ignored). */
  bindingMode: string | undefined;
  node: string;
  nodeLabels: Readonly<Record<string, string>> | undefined;
  loadAffinity: readonly LoadAffinity[] | undefined;
  createdAt: Date | undefined;
  now: Date;
  prepareTimeoutMs: number;
  targetRef: string;
}): AcceptDecision {
  const { target, createdAt, now, prepareTimeoutMs } = opts;
  if (opts.bindingMode === 'WaitForFirstConsumer') {
    const selectedNode = target.metadata?.annotations?.[Annotations.SelectedNode] || undefined;
    return selectedNodeDecision({ selectedNode, node: opts.node, createdAt, now, prepareTimeoutMs, targetRef: opts.targetRef });
  }
  // The restore volume is made in the target's storage class: that class's load affinity applies.
  const affinity = loadAffinityFor(opts.loadAffinity, target.spec?.storageClassName);
  return loadAffinityDecision({ affinity, nodeLabels: opts.nodeLabels, createdAt, now, prepareTimeoutMs });
}

export function dataDownloadSpec(ctx: DataDownloadControllerContext): DataPathKindSpec<DataDownload> {
  const client = customClient<DataDownload>(ctx.kube, Kinds.DataDownload, parseDataDownload);
  const now = () => new Date((ctx.clock ?? realTimerClock).now());
  const annotate = (name: string, pvName: string, progress?: { totalBytes: number }) =>
    client.update(ctx.namespace, name, (o) => {
      if (o.metadata.annotations?.[RESTORED_PV_ANNOTATION] === pvName && !progress) return false;
      o.metadata = { ...o.metadata, annotations: { ...(o.metadata.annotations ?? {}), [RESTORED_PV_ANNOTATION]: pvName } };
      if (progress) o.status = { ...(o.status ?? {}), progress: { totalBytes: progress.totalBytes, bytesDone: progress.totalBytes } };
    });
  return {
    kind: 'DataDownload',
    short: 'DD',
    resource: Kinds.DataDownload,
    client,
    finalizer: Finalizers.DataUploadDownload,
    ignored: (dd) => !isBuiltInDataMover(dd.spec.datamover),
    describe: (dd) => ({ target: targetRefOf(dd), snapshotID: dd.spec.snapshotID }),
    processingNode: (dd) => dd.status?.node,
    async acceptDecision(dd) {
      const target = await readPvc(ctx.kube, dd.spec.targetVolume.namespace, dd.spec.targetVolume.pvc);
      const createdAt = creationTimestampOf(dd);
      if (!target) return targetPvcDecision({ targetExists: false, createdAt, now: now(), prepareTimeoutMs: ctx.prepareTimeoutMs, targetRef: targetRefOf(dd) });
      const storageClass = target.spec?.storageClassName;
      const bindingMode = !ctx.ignoreDelayBinding && storageClass ? await readBindingMode(ctx.kube, storageClass) : undefined;
      return dataDownloadAcceptDecision({
        target,
        bindingMode,
        node: ctx.nodeName,
        nodeLabels: ctx.nodeLabels,
        loadAffinity: ctx.loadAffinity,
        createdAt,
        now: now(),
        prepareTimeoutMs: ctx.prepareTimeoutMs,
        targetRef: targetRefOf(dd),
      });
    },
    onAccepted(dd, node) {
      dd.status = { ...(dd.status ?? {}), node, acceptedByNode: node };
    },
    expose: (dd) => ctx.exposer.expose(dd),
    getExposed: (name) => ctx.exposer.getExposed(name),
    cleanUp: (dd) => ctx.exposer.cleanUp(dd),
    onCompleted() {
      // Phase, timestamps and progress say it all.
    },
    beforeCompleted: {
      async begin(dd, result) {
        // The restored PV's name (the restore PVC is deleted on the way) and the data mover's total, from now on
        // the record that the data moved: a restart resumes the re-bind instead of looking for the pod.
        const restore = await readPvc(ctx.kube, ctx.namespace, dd.metadata.name ?? '');
        await annotate(dd.metadata.name ?? '', restore?.spec?.volumeName ?? '', { totalBytes: result.totalBytes });
      },
      pending: (dd) => dd.metadata.annotations?.[RESTORED_PV_ANNOTATION] !== undefined,
      step: (dd) => ctx.exposer.rebind(dd, async (pvName) => void (await annotate(dd.metadata.name ?? '', pvName))),
    },
    failurePrefix: 'data path restore failed',
  };
}

export function createDataDownloadController(ctx: DataDownloadControllerContext): DataPathController<DataDownload> {
  return createDataPathController(dataDownloadSpec(ctx), ctx);
}
