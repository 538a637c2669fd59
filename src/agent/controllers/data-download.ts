/**
 * The node-agent's DataDownload controller (snapshot data movement, restore side; docs/data-mover.md): any
 * node-agent whose node the load affinity allows may claim a New DataDownload of the built-in data mover once its
 * target PVC exists (until then it waits, within the prepare timeout counted from the DD's creation). The generic
 * restore exposer makes a restore PVC and pod; when the data mover has succeeded, the restored PV is re-bound to the
 * target PVC before the DD is Completed (a failed re-bind fails it).
 */
import { realTimerClock } from '../../base/clock.js';
import { Finalizers } from '../../api/constants.js';
import { Kinds, creationTimestampOf, parseDataDownload, type DataDownload } from '../../api/index.js';
import { customClient } from '../../kube/custom.js';
import { loadAffinityFor } from '../config.js';
import { readPvc } from '../exposer/exposed-objects.js';
import { targetRefOf, type GenericRestoreExposer } from '../exposer/generic-restore-exposer.js';
import { RESTORED_PV_ANNOTATION } from '../exposer/rebind.js';
import { createDataPathController, type DataPathController, type DataPathControllerContext, type DataPathKindSpec } from './data-path-controller.js';
import { loadAffinityDecision, type AcceptDecision } from './data-path-decisions.js';
import { isBuiltInDataMover } from './data-upload.js';

export interface DataDownloadControllerContext extends DataPathControllerContext {
  exposer: GenericRestoreExposer;
}

const TARGET_WAIT_RETRY_MS = 3000;

/** Claim once the target PVC exists; after the prepare timeout claim anyway, so the expose fails it with a reason. */
export function targetPvcDecision(opts: { targetExists: boolean; createdAt: Date | undefined; now: Date; prepareTimeoutMs: number; targetRef: string }): AcceptDecision {
  if (opts.targetExists) return { accept: true };
  const waited = opts.createdAt ? opts.now.getTime() - opts.createdAt.getTime() : 0;
  if (waited >= opts.prepareTimeoutMs) return { accept: true };
  return { accept: false, retryAfterMs: TARGET_WAIT_RETRY_MS, why: `target PVC ${opts.targetRef} does not exist yet` };
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
      // The restore volume is made in the target's storage class: that class's load affinity applies.
      const affinity = loadAffinityFor(ctx.loadAffinity, target.spec?.storageClassName);
      return loadAffinityDecision({ affinity, nodeLabels: ctx.nodeLabels, createdAt, now: now(), prepareTimeoutMs: ctx.prepareTimeoutMs });
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
