/**
 * The reconcile both cancel controllers share (of Backups and of Restores): it reads the object, decides its step
 * (./cancel-lifecycle.ts) and carries out the steps both kinds take; the kind does the clean-up of a Canceling one
 * and any step of its own.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../base/logger.js';
import type { ObjectKey, ReconcileResult } from '../kube/controller.js';
import type { CustomClient } from '../kube/custom.js';
import type { CancelStep } from './cancel-lifecycle.js';

export interface CancelReconcilerSpec<T extends KubernetesObject, S extends { step: string }> {
  /** The kind as the log names it ("backup"). */
  kind: string;
  /** The install namespace: objects elsewhere are not this server's. */
  namespace: string;
  client: CustomClient<T>;
  log: Logger;
  stepOf: (obj: T) => S;
  beginCanceling: (obj: T) => boolean;
  endCanceled: (obj: T) => boolean;
  /** Stops this process's run of the object. */
  abortRun: (key: ObjectKey) => void;
  /** When to look again at an object whose run was asked to stop (its run writes Canceling; in case it could not). */
  abortRequeueMs: number;
  /** Canceling: stop its volume operations, wait for them, clean up, Canceled. */
  cancel: (key: ObjectKey, obj: T) => Promise<ReconcileResult | void>;
  /** The steps of the kind's own. */
  ownStep?: (key: ObjectKey, step: Exclude<S, CancelStep>) => ReconcileResult | void;
}

export function cancelReconciler<T extends KubernetesObject, S extends CancelStep | { step: string }>(spec: CancelReconcilerSpec<T, S>) {
  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    if (key.namespace !== spec.namespace) return;
    const obj = await spec.client.get(key.namespace, key.name);
    if (!obj) return;
    const next = spec.stepOf(obj);
    switch (next.step) {
      case 'none':
        return;
      case 'end-new':
        await spec.client.update(key.namespace, key.name, (o) => (spec.stepOf(o).step === 'end-new' ? spec.endCanceled(o) : false));
        spec.log.info({ [spec.kind]: key.name }, `${spec.kind} canceled before it started`);
        return;
      case 'abort-run':
        spec.abortRun(key);
        spec.log.info({ [spec.kind]: key.name }, `stopping the run of a canceled ${spec.kind}`);
        return { requeueAfterMs: spec.abortRequeueMs };
      case 'begin':
        // Decided again on the object as written, in case a run started meanwhile.
        await spec.client.update(key.namespace, key.name, (o) => (spec.stepOf(o).step === 'begin' ? spec.beginCanceling(o) : false));
        return;
      case 'cancel':
        return spec.cancel(key, obj);
      default:
        return spec.ownStep?.(key, next as Exclude<S, CancelStep>);
    }
  };
}
