/**
 * The restore controller's part of exec hooks: the pods' hooks waiting on the Restore (annotation
 * `restore.cairn.io/pending-exec-hooks`, written with the phase when the items are restored) are looked at on each
 * pass of WaitingForPluginOperations and Finalizing; a container whose pod volumes are restored and which is up gets
 * its hooks run, one that can no longer get there fails them. Each result is recorded where the restore's
 * finalization reads it: output in the restore log, errors in its results (storage), counts in
 * `status.hookStatus`, the container taken off the list (on the Restore). The restore completes once the list is
 * empty. A failed `onError: Fail` hook ends the pod's other hooks too (they count as failed, not executed).
 */
import type { PodVolumeRestore, Restore } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import type { CustomClient } from '../../kube/custom.js';
import type { PodExecutor } from '../../kube/pod-exec.js';
import { resultsFrom } from '../restore/restore-finalize.js';
import { createRestoreLog } from '../restore/restore-log.js';
import type { BackupStore } from '../../storage/backup-store.js';
import { gunzipText } from '../../storage/encoding.js';
import { runExecHooks } from './hook-runner.js';
import { readJsonListAnnotation, writeJsonListAnnotation } from './json-list-annotation.js';
import { RESTORE_EXEC_HOOKS_ANNOTATION, restoreHookReadiness, type ObservedPod, type PendingRestoreHooks } from './restore-hooks.js';

const PHASE = 'post-restore';

export function readPendingRestoreHooks(annotations: Readonly<Record<string, string>> | undefined): PendingRestoreHooks[] {
  return readJsonListAnnotation(annotations, RESTORE_EXEC_HOOKS_ANNOTATION);
}

export function writePendingRestoreHooks(annotations: Record<string, string>, pending: readonly PendingRestoreHooks[]): void {
  writeJsonListAnnotation(annotations, RESTORE_EXEC_HOOKS_ANNOTATION, pending);
}

const key = (g: Pick<PendingRestoreHooks, 'namespace' | 'pod' | 'container'>) => `${g.namespace}/${g.pod}/${g.container}`;
const podKey = (g: Pick<PendingRestoreHooks, 'namespace' | 'pod'>) => `${g.namespace}/${g.pod}`;

export interface RestoreHookStepOptions {
  kube: Kube;
  restore: Restore;
  restores: CustomClient<Restore>;
  /** The restore's PodVolumeRestores as last seen. */
  podVolumeRestores: readonly PodVolumeRestore[];
  store: () => Promise<BackupStore | undefined>;
  exec: PodExecutor;
  now: Date;
  /** Longest wait for a container without a waitTimeout of its own (the restore's itemOperationTimeout). */
  limitMs: number;
  log: Logger;
}

const PVR_DONE = new Set(['Completed', 'Failed', 'Canceled']);

async function readPod(kube: Kube, namespace: string, name: string): Promise<ObservedPod | undefined> {
  try {
    return (await kube.core.readNamespacedPod({ name, namespace })) as unknown as ObservedPod;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Runs or fails the hooks that can be decided now; returns how many container groups still wait. */
export async function advanceRestoreExecHooks(opts: RestoreHookStepOptions): Promise<{ waiting: number }> {
  const pending = readPendingRestoreHooks(opts.restore.metadata.annotations);
  if (!pending.length) return { waiting: 0 };
  const lines = createRestoreLog({ restore: opts.restore.metadata.name ?? '', server: opts.log });
  const finished = new Set<string>();
  /** Pods where a Fail hook failed: their remaining groups fail unexecuted. */
  const stopped = new Set<string>();
  let total = { attempted: 0, failed: 0 };
  const errors: { namespace: string; message: string }[] = [];
  const pods = new Map<string, ObservedPod | undefined>();

  const failGroup = (g: PendingRestoreHooks, reason: string) => {
    for (const h of g.hooks) {
      const message = `${PHASE} hook ${h.name} in container ${g.container} of pod ${podKey(g)} failed: ${reason}`;
      lines.logger.error(message);
      errors.push({ namespace: g.namespace, message });
    }
    total = { ...total, attempted: total.attempted + g.hooks.length, failed: total.failed + g.hooks.length };
    finished.add(key(g));
  };

  for (const group of pending) {
    if (stopped.has(podKey(group))) {
      failGroup(group, 'not executed: an earlier hook of the pod failed with onError Fail');
      continue;
    }
    if (!pods.has(podKey(group))) pods.set(podKey(group), await readPod(opts.kube, group.namespace, group.pod));
    const pod = pods.get(podKey(group));
    const pvrs = opts.podVolumeRestores.filter((p) => p.spec.pod.namespace === group.namespace && p.spec.pod.name === group.pod);
    const podVolumesDone = pvrs.every((p) => PVR_DONE.has(p.status?.phase ?? '') || Boolean(p.metadata?.annotations?.['restore.cairn.io/pod-volume-error']));
    const readiness = restoreHookReadiness({ group, pod, podVolumesDone, now: opts.now, limitMs: opts.limitMs });
    if (readiness.state === 'wait') continue;
    if (readiness.state === 'fail') {
      failGroup(group, readiness.reason);
      continue;
    }
    // A hook whose own waitTimeout passed before its container was up is not run (Velero: expired before executing).
    const created = new Date((pod?.metadata?.creationTimestamp as string | undefined) ?? opts.now).getTime();
    const waited = opts.now.getTime() - created;
    const hooks = group.hooks.map((h) => (h.waitTimeoutMs && waited > h.waitTimeoutMs && !h.problem ? { ...h, problem: `expired before executing (waitTimeout ${Math.round(h.waitTimeoutMs / 1000)}s)` } : h));
    const outcome = await runExecHooks({
      pod: { metadata: { name: group.pod, namespace: group.namespace }, ...(pod?.status?.phase ? { status: { phase: pod.status.phase } } : {}) },
      phase: PHASE,
      hooks,
      exec: opts.exec,
      log: lines.logger,
    });
    // Velero records the hooks a Fail stopped as failed too ("not executed").
    const notRun = outcome.notRun.map((h) => `${PHASE} hook ${h.name} in container ${h.container} of pod ${podKey(group)} failed: not executed: an earlier hook failed with onError Fail`);
    for (const m of notRun) lines.logger.error(m);
    total = { ...total, attempted: total.attempted + outcome.attempted, failed: total.failed + outcome.failed + notRun.length };
    errors.push(...[...outcome.errors, ...notRun].map((message) => ({ namespace: group.namespace, message })));
    if (outcome.failedHard) stopped.add(podKey(group));
    finished.add(key(group));
  }
  // Groups of a stopped pod seen before the Fail in this pass.
  for (const group of pending) if (stopped.has(podKey(group)) && !finished.has(key(group))) failGroup(group, 'not executed: an earlier hook of the pod failed with onError Fail');
  if (!finished.size) return { waiting: pending.length };

  const name = opts.restore.metadata.name ?? '';
  const store = await opts.store();
  if (store) {
    const previous = await store.getDownload('RestoreLog', name).then((b) => (b ? gunzipText(b) : ''));
    const results = resultsFrom(await store.getRestoreJson(name, 'results'));
    const already = new Set(Object.values(results.toJSON().errors.namespaces ?? {}).flat());
    for (const e of errors) if (!already.has(e.message)) results.error({ kind: 'namespace', namespace: e.namespace }, e.message);
    await store.putRestoreFiles(name, { log: previous + lines.text(), results: results.toJSON() });
  }
  await opts.restores.update(opts.restore.metadata.namespace ?? '', name, (r) => {
    const left = readPendingRestoreHooks(r.metadata.annotations).filter((g) => !finished.has(key(g)));
    r.metadata.annotations = { ...r.metadata.annotations };
    writePendingRestoreHooks(r.metadata.annotations, left);
    const hs = r.status?.hookStatus ?? {};
    r.status = { ...r.status, hookStatus: { hooksAttempted: (hs.hooksAttempted ?? 0) + total.attempted, hooksFailed: (hs.hooksFailed ?? 0) + total.failed } };
  });
  opts.log.info({ restore: name, containers: [...finished], failed: total.failed }, 'ran post-restore exec hooks');
  return { waiting: pending.length - finished.size };
}
