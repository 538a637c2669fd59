/**
 * The node-agent's DataUpload controller (snapshot data movement, backup side; docs/data-mover.md): any node-agent
 * whose node the load affinity allows may claim a New DataUpload of the built-in data mover; the CSI snapshot exposer
 * then restores the snapshot into a backup PVC read by a backup pod on the claiming node. Completion records the
 * snapshot ID and the in-pod path; the exposed objects are deleted once the DataUpload is finished, whatever its
 * outcome.
 */
import { Finalizers } from '../../api/constants.js';
import { Kinds, SnapshotType, creationTimestampOf, parseDataUpload, type DataUpload } from '../../api/index.js';
import { realTimerClock } from '../../base/clock.js';
import { customClient } from '../../kube/custom.js';
import type { DataMoverExposer } from '../exposer/csi-snapshot-exposer.js';
import { backupResultStatus } from '../microservice/protocol.js';
import { backupPvcClass, loadAffinityFor, type BackupPvcConfig } from '../config.js';
import { loadAffinityDecision } from './data-path-decisions.js';
import { createDataPathController, type DataPathController, type DataPathControllerContext, type DataPathKindSpec } from './data-path-controller.js';

/** The data mover names cairn's node-agent runs ('' is the default, as in Velero). */
export const BUILT_IN_DATA_MOVERS: ReadonlySet<string> = new Set(['', 'velero']);
export const EMPTY_VOLUME_UPLOAD_MESSAGE = 'volume was empty so no data was uploaded';

export const isBuiltInDataMover = (datamover: string | undefined) => BUILT_IN_DATA_MOVERS.has(datamover ?? '');

export interface DataUploadControllerContext extends DataPathControllerContext {
  exposer: DataMoverExposer<DataUpload>;
  /** The node agent's backupPVC settings: the backup PVC's class decides which load affinity applies. */
  backupPVC?: Record<string, BackupPvcConfig>;
}

export function dataUploadSpec(ctx: DataUploadControllerContext): DataPathKindSpec<DataUpload> {
  return {
    kind: 'DataUpload',
    short: 'DU',
    resource: Kinds.DataUpload,
    client: customClient<DataUpload>(ctx.kube, Kinds.DataUpload, parseDataUpload),
    finalizer: Finalizers.DataUploadDownload,
    ignored: (du) => !isBuiltInDataMover(du.spec.datamover),
    describe: (du) => ({ source: `${du.spec.sourceNamespace}/${du.spec.sourcePVC}`, volumeSnapshot: du.spec.csiSnapshot?.volumeSnapshot }),
    processingNode: (du) => du.status?.node,
    // Any node the load affinity allows may move a snapshot: the exposed volume is provisioned for the claiming node.
    acceptDecision: (du) =>
      Promise.resolve(
        loadAffinityDecision({
          // The backup PVC's class (backupPVC may give it another) is the one whose entry applies, as in Velero.
          affinity: loadAffinityFor(ctx.loadAffinity, backupPvcClass(ctx, du.spec.csiSnapshot?.storageClass ?? '')),
          nodeLabels: ctx.nodeLabels,
          createdAt: creationTimestampOf(du),
          now: new Date((ctx.clock ?? realTimerClock).now()),
          prepareTimeoutMs: ctx.prepareTimeoutMs,
        }),
      ),
    onAccepted(du, node) {
      du.status = { ...(du.status ?? {}), node, acceptedByNode: node };
    },
    expose(du) {
      if (du.spec.snapshotType !== SnapshotType.CSI) return Promise.reject(new Error(`unsupported snapshot type ${JSON.stringify(du.spec.snapshotType)}`));
      return ctx.exposer.expose(du);
    },
    getExposed: (name) => ctx.exposer.getExposed(name),
    cleanUp: (du) => ctx.exposer.cleanUp(du),
    onCompleted(du, result) {
      du.status = { ...(du.status ?? {}), ...backupResultStatus(result, EMPTY_VOLUME_UPLOAD_MESSAGE) };
    },
    failurePrefix: 'data path backup failed',
  };
}

export function createDataUploadController(ctx: DataUploadControllerContext): DataPathController<DataUpload> {
  return createDataPathController(dataUploadSpec(ctx), ctx);
}
