/**
 * The operations controller's part of backup hooks: for a backup waiting for its PodVolumeBackups and DataUploads,
 * run the post hooks of each pod whose volumes allow it (./pending-post-hooks.ts), then record them: the output in
 * the backup's log and the errors in its results (in storage, where finalization reads them), the counts in
 * `status.hookStatus` and the pod taken off the pending list (on the Backup). A server stopping between running
 * and recording runs those hooks again on its next pass (post hooks such as unfreezing are safe to repeat).
 */
import type { Backup, DataUpload, PodVolumeBackup } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import type { CustomClient } from '../../kube/custom.js';
import type { PodExecutor } from '../../kube/pod-exec.js';
import { createBackupLog } from '../backup/backup-log.js';
import { getVolumeSnapshot } from '../datamover/backup-snapshots.js';
import type { Results } from '../../api/results.js';
import type { BackupStore } from '../../storage/backup-store.js';
import { addOutcomes, runExecHooks, NO_HOOKS } from './hook-runner.js';
import { pendingPod, postHooksReady, readPendingPostHooks, samePod, writePendingPostHooks, type PendingPostHooks } from './pending-post-hooks.js';

export interface PostHookStepOptions {
  kube: Kube;
  backup: Backup;
  pvbs: readonly PodVolumeBackup[];
  dus: readonly DataUpload[];
  backups: CustomClient<Backup>;
  /** Opens the backup's storage (only when a hook ran). */
  store: () => Promise<BackupStore | undefined>;
  exec: PodExecutor;
  log: Logger;
}

/** Adds error lines (each once) to the namespaces of stored results. */
function withErrors(results: Results, errors: readonly { namespace: string; message: string }[]): Results {
  const out = structuredClone(results);
  out.errors ??= {};
  for (const e of errors) {
    const list = ((out.errors.namespaces ??= {})[e.namespace] ??= []);
    if (!list.includes(e.message)) list.push(e.message);
  }
  return out;
}

/** Whether the snapshot a DataUpload moves has been cut (or failed, which ends the wait as well). */
async function snapshotsTaken(kube: Kube, dus: readonly DataUpload[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (const du of dus) {
    const vs = du.spec.csiSnapshot?.volumeSnapshot;
    if (!vs) continue;
    const snapshot = await getVolumeSnapshot(kube, du.spec.sourceNamespace, vs).catch(() => undefined);
    const status = snapshot?.status as { readyToUse?: boolean; creationTime?: string; error?: unknown } | undefined;
    if (!snapshot || status?.readyToUse || status?.creationTime || status?.error) taken.add(du.metadata.name ?? '');
  }
  return taken;
}

/** Runs the post hooks that can run now; returns how many pods still wait. */
export async function runReadyPostHooks(opts: PostHookStepOptions): Promise<{ waiting: number }> {
  const pending = readPendingPostHooks(opts.backup.metadata.annotations);
  if (!pending.length) return { waiting: 0 };
  const relevant = opts.dus.filter((d) => pending.some((p) => p.namespace === d.spec.sourceNamespace && p.claims.includes(d.spec.sourcePVC)));
  const taken = await snapshotsTaken(opts.kube, relevant);
  const ready: PendingPostHooks[] = [];
  for (const entry of pending) {
    const verdict = postHooksReady(entry, opts.pvbs, opts.dus, (du) => taken.has(du.metadata.name ?? ''));
    if (verdict.ready) ready.push(entry);
  }
  if (!ready.length) return { waiting: pending.length };

  const name = opts.backup.metadata.name ?? '';
  const lines = createBackupLog({ backup: `${opts.backup.metadata.namespace ?? ''}/${name}` });
  let total = NO_HOOKS;
  const errors: { namespace: string; message: string }[] = [];
  for (const entry of ready) {
    lines.logger.info({ pod: `${entry.namespace}/${entry.pod}` }, 'The volumes of the pod are backed up; running its post hooks');
    const outcome = await runExecHooks({ pod: pendingPod(entry), phase: 'post', hooks: entry.hooks, exec: opts.exec, log: lines.logger });
    total = addOutcomes(total, outcome);
    errors.push(...outcome.errors.map((message) => ({ namespace: entry.namespace, message })));
  }
  const store = await opts.store();
  if (store) {
    const log = (await store.getBackupLog(name)) ?? '';
    await store.putBackupLog(name, log + lines.text());
    if (errors.length) {
      const stored = ((await store.getBackupJson(name, 'results')) as Results | undefined) ?? { warnings: {}, errors: {} };
      await store.putBackupJson(name, 'results', withErrors({ warnings: stored.warnings ?? {}, errors: stored.errors ?? {} }, errors));
    }
  }
  await opts.backups.update(opts.backup.metadata.namespace ?? '', name, (b) => {
    const left = readPendingPostHooks(b.metadata.annotations).filter((p) => !ready.some((r) => samePod(r, p)));
    b.metadata.annotations = { ...b.metadata.annotations };
    writePendingPostHooks(b.metadata.annotations, left);
    const hs = b.status?.hookStatus ?? {};
    b.status = { ...b.status, hookStatus: { hooksAttempted: (hs.hooksAttempted ?? 0) + total.attempted, hooksFailed: (hs.hooksFailed ?? 0) + total.failed } };
  });
  opts.log.info({ backup: name, pods: ready.map((r) => `${r.namespace}/${r.pod}`), failed: total.failed }, 'ran the post hooks of pods whose volumes are backed up');
  return { waiting: pending.length - ready.length };
}

