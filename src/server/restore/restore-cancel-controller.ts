/**
 * Carries out the cancel of Restores (docs/restore.md "Canceling a restore"; the decisions are ./cancel-decisions.ts),
 * on a queue of its own, so a cancel is seen at once even while the restore controller's queue is busy with a run:
 *   New, cancel asked            → Canceled;
 *   item pass run by this process → stopped through its abort signal (the run writes Canceling);
 *   waiting, finalizing, or left by a server that stopped → Canceling;
 *   Canceling                    → `spec.cancel` on its unfinished PodVolumeRestores and DataDownloads; once they
 *                                  have ended, Canceled.
 * Every step reads what is there now and is idempotent, so a restart while Canceling finishes the cancel.
 */
import {
  Kinds,
  Labels,
  parseDataDownload,
  parsePodVolumeRestore,
  parseRestore,
  volumeOperationRunning,
  type DataDownload,
  type PodVolumeRestore,
  type Restore,
} from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient, type ResourceKind } from '../../kube/custom.js';
import { isNotFound } from '../../kube/errors.js';
import { keyString, startCustomController, type ObjectKey, type ReconcileResult } from '../../kube/controller.js';
import type { ServerContext, Stoppable } from '../context.js';
import type { RunRegistry } from '../run-registry.js';
import { RESTORE_CANCEL_POLL_MS, beginRestoreCanceling, endRestoreCanceled, restoreCancelStep, restoreCancelingStep } from './cancel-decisions.js';
import { cancelRequestedAtMs } from '../cancel-lifecycle.js';
import { cancelReconciler } from '../cancel-reconciler.js';

export interface RestoreCancelControllerOptions extends ServerContext {
  /** The restore runs of this process (shared with the restore controller), by namespace/name. */
  runs: RunRegistry;
}

type VolumeOperation = PodVolumeRestore | DataDownload;

/** Asks the unfinished ones to cancel; returns how many have not ended. */
async function cancelVolumeOperations<T extends VolumeOperation>(o: { kube: Kube; kind: ResourceKind; parse: (x: unknown) => T; namespace: string; restoreUid: string; what: string; log: Logger }): Promise<number> {
  const client = customClient<T>(o.kube, o.kind, o.parse);
  let items: T[];
  try {
    items = await client.list(o.namespace, `${Labels.RestoreUID}=${o.restoreUid}`);
  } catch (err) {
    // A cluster without the DataDownload CRD has none.
    if (isNotFound(err) || isNotFound((err as { cause?: unknown }).cause)) return 0;
    throw err;
  }
  let running = 0;
  for (const item of items) {
    const phase = item.status?.phase ?? '';
    if (item.spec.cancel) {
      if (volumeOperationRunning(item)) running++;
      continue;
    }
    if (!volumeOperationRunning(item)) continue;
    const asked = await client.patch(o.namespace, item.metadata?.name ?? '', { spec: { cancel: true } });
    if (volumeOperationRunning(asked)) running++;
    o.log.warn({ [o.what]: item.metadata?.name, phase: phase || 'New' }, `${o.what} is in status "${phase || 'New'}" and its restore is canceled, mark it as cancel`);
  }
  return running;
}

export function restoreCancelReconciler(opts: RestoreCancelControllerOptions) {
  const restores = customClient<Restore>(opts.kube, Kinds.Restore, (o) => o as Restore);
  const log = opts.logger.child({ controller: 'restore-cancel' });
  const stepOf = (r: Restore) => restoreCancelStep(r, { runningHere: opts.runs.has(keyString({ namespace: r.metadata.namespace ?? '', name: r.metadata.name ?? '' })) });

  async function cancel(key: ObjectKey, restore: Restore): Promise<ReconcileResult | void> {
    const uid = restore.metadata.uid ?? '';
    const common = { kube: opts.kube, namespace: key.namespace, restoreUid: uid, log };
    const running = uid
      ? (await cancelVolumeOperations<PodVolumeRestore>({ ...common, kind: Kinds.PodVolumeRestore, parse: parsePodVolumeRestore, what: 'PodVolumeRestore' })) +
        (await cancelVolumeOperations<DataDownload>({ ...common, kind: Kinds.DataDownload, parse: parseDataDownload, what: 'DataDownload' }))
      : 0;
    const next = restoreCancelingStep(running, { requestedAtMs: cancelRequestedAtMs(restore), nowMs: opts.now().getTime() });
    if (next.step === 'wait') return { requeueAfterMs: next.requeueAfterMs };
    if (next.gaveUp) log.warn({ restore: key.name, running }, 'the canceled restore waited too long for its volume operations to stop; ending it without them');
    await restores.update(key.namespace, key.name, (r) => endRestoreCanceled(r, opts.now()));
    log.info({ restore: key.name }, 'restore canceled');
  }

  return cancelReconciler({
    kind: 'restore',
    namespace: opts.namespace,
    client: restores,
    log,
    stepOf,
    beginCanceling: beginRestoreCanceling,
    endCanceled: (r) => endRestoreCanceled(r, opts.now()),
    abortRun: (key) => opts.runs.cancel(keyString(key)),
    abortRequeueMs: RESTORE_CANCEL_POLL_MS * 5,
    cancel,
  });
}

export async function startRestoreCancelController(opts: RestoreCancelControllerOptions): Promise<Stoppable> {
  const client = customClient<Restore>(opts.kube, Kinds.Restore, parseRestore);
  const controller = await startCustomController<Restore>(opts, client, {
    name: 'restore-cancel',
    reconcile: restoreCancelReconciler(opts),
  });
  return { stop: () => controller.stop() };
}
