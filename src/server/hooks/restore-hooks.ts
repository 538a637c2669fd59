/**
 * Exec hooks after restore (pure), with Velero's rules: a restored pod's annotations
 * (`post.hook.restore.velero.io/command`, `/container`, `/on-error`, `/exec-timeout`, `/wait-timeout`,
 * `/wait-for-ready`) win; otherwise every matching `spec.hooks.resources[].postHooks[].exec`, in order. Hooks are
 * grouped by container (default: the pod's first); a container's hooks run, in order, once it is running (ready,
 * if any of them has waitForReady), which is after the pod's PodVolumeRestores (restore-wait holds the containers
 * until then). A hook whose `waitTimeout` (counted from the pod's creation) passes first is not run and fails.
 * Defaults: onError Fail, execTimeout 30s, no wait limit (cairn bounds it by the restore's itemOperationTimeout).
 * Where Velero logs a bad value and carries on, cairn fails that hook with an error naming the annotation or field:
 * a container the pod lacks, a timeout that is not a duration, an unknown on-error, a wait-for-ready that is not
 * true or false.
 */
import { Annotations, HookErrorMode, type RestoreResourceHookSpec } from '../../api/index.js';
import { restoreHookApplies } from '../item-actions/restore-init-hooks.js';
import { DEFAULT_HOOK_TIMEOUT_MS, annotationHookFields, hookDurationField, onErrorFromAnnotation, problemField, type HookPod, type ResolvedExecHook } from './backup-hooks.js';

export interface RestoreExecHook extends ResolvedExecHook {
  /** 0 = no limit of its own. */
  waitTimeoutMs: number;
  waitForReady: boolean;
}

/** The hooks of one container of one restored pod, waiting to run. */
export interface PendingRestoreHooks {
  namespace: string;
  pod: string;
  uid: string;
  container: string;
  hooks: RestoreExecHook[];
}

export const RESTORE_EXEC_HOOKS_ANNOTATION = 'restore.cairn.io/pending-exec-hooks';

function containerCheck(pod: HookPod, container: string, field: string, problems: string[]): void {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  if (!names.includes(container)) problems.push(`${field}: container "${container}" does not exist in pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name}${names.length ? ` (it has ${names.join(', ')})` : ''}`);
}

function annotationHook(pod: HookPod): RestoreExecHook | undefined {
  const a = pod.metadata.annotations ?? {};
  const commandText = a[Annotations.PostRestoreHookCommand];
  if (!commandText) return undefined;
  const problems: string[] = [];
  const container = a[Annotations.PostRestoreHookContainer] || (pod.spec?.containers?.[0]?.name ?? '');
  containerCheck(pod, container, `annotation ${Annotations.PostRestoreHookContainer}`, problems);
  const onError = onErrorFromAnnotation(a, Annotations.PostRestoreHookOnError, problems);
  const execMs = hookDurationField(a[Annotations.PostRestoreHookExecTimeout], `annotation ${Annotations.PostRestoreHookExecTimeout}`, problems);
  const waitMs = hookDurationField(a[Annotations.PostRestoreHookWaitTimeout], `annotation ${Annotations.PostRestoreHookWaitTimeout}`, problems);
  const readyText = a[Annotations.PostRestoreHookWaitForReady];
  let waitForReady = false;
  if (readyText) {
    if (['true', 'false', '1', '0', 't', 'f', 'True', 'False', 'TRUE', 'FALSE'].includes(readyText)) waitForReady = ['true', '1', 't', 'True', 'TRUE'].includes(readyText);
    else problems.push(`annotation ${Annotations.PostRestoreHookWaitForReady}: "${readyText}" is neither true nor false`);
  }
  return {
    ...annotationHookFields(commandText, container, onError),
    timeoutMs: execMs || DEFAULT_HOOK_TIMEOUT_MS,
    waitTimeoutMs: waitMs,
    waitForReady,
    ...problemField(problems),
  };
}

/** The exec hooks of a restored pod (`pod` as created, in its target namespace), grouped by container. */
export function restoreExecHooksFor(pod: HookPod & { metadata: { uid?: string | undefined } }, hooks: readonly RestoreResourceHookSpec[]): PendingRestoreHooks[] {
  const list: RestoreExecHook[] = [];
  const fromAnnotation = annotationHook(pod);
  if (fromAnnotation) list.push(fromAnnotation);
  else {
    for (const [i, spec] of hooks.entries()) {
      if (!restoreHookApplies(spec, pod.metadata.namespace ?? '', pod.metadata.labels)) continue;
      for (const [j, hook] of (spec.postHooks ?? []).entries()) {
        const exec = hook.exec;
        if (!exec) continue;
        const field = `spec.hooks.resources[${i}].postHooks[${j}].exec`;
        const problems: string[] = [];
        const container = exec.container || (pod.spec?.containers?.[0]?.name ?? '');
        containerCheck(pod, container, `${field}.container`, problems);
        const execMs = hookDurationField(exec.execTimeout, `${field}.execTimeout`, problems);
        const waitMs = hookDurationField(exec.waitTimeout, `${field}.waitTimeout`, problems);
        list.push({
          name: spec.name,
          source: 'spec',
          index: j,
          container,
          command: [...exec.command],
          onError: exec.onError ?? HookErrorMode.Fail,
          timeoutMs: execMs || DEFAULT_HOOK_TIMEOUT_MS,
          waitTimeoutMs: waitMs,
          waitForReady: exec.waitForReady === true,
          ...problemField(problems),
        });
      }
    }
  }
  const groups = new Map<string, PendingRestoreHooks>();
  for (const h of list) {
    const g = groups.get(h.container) ?? { namespace: pod.metadata.namespace ?? '', pod: pod.metadata.name, uid: pod.metadata.uid ?? '', container: h.container, hooks: [] };
    g.hooks.push(h);
    groups.set(h.container, g);
  }
  return [...groups.values()];
}

/** What the observed pod says about one container's hooks now. */
export type RestoreHookReadiness =
  | { state: 'run' }
  | { state: 'wait'; why: string }
  /** They cannot run any more: each fails with `reason`. */
  | { state: 'fail'; reason: string };

export interface ObservedPod {
  metadata?: { uid?: string; creationTimestamp?: string | Date; deletionTimestamp?: unknown };
  status?: { phase?: string; containerStatuses?: { name: string; ready?: boolean; state?: { running?: object | null } }[] };
}

/**
 * Whether a container's hooks can run: the pod (same UID) exists and runs, its pod volume restores are done, and
 * the container is running (ready with waitForReady). `limitMs` bounds waits without a waitTimeout of their own.
 */
export function restoreHookReadiness(opts: { group: PendingRestoreHooks; pod: ObservedPod | undefined; podVolumesDone: boolean; now: Date; limitMs: number }): RestoreHookReadiness {
  const { group, pod } = opts;
  const name = `${group.namespace}/${group.pod}`;
  if (group.hooks.every((h) => h.problem)) return { state: 'run' };
  if (!pod || (group.uid && pod.metadata?.uid !== group.uid) || pod.metadata?.deletionTimestamp) return { state: 'fail', reason: `pod ${name} deleted before all hooks were executed` };
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { state: 'fail', reason: `pod entered phase ${phase} before some post-restore exec hooks ran` };
  const waitForReady = group.hooks.some((h) => h.waitForReady);
  const cs = pod.status?.containerStatuses?.find((c) => c.name === group.container);
  const up = opts.podVolumesDone && (waitForReady ? cs?.ready === true : Boolean(cs?.state?.running));
  if (up) return { state: 'run' };
  const created = new Date(pod.metadata?.creationTimestamp ?? opts.now).getTime();
  const waited = opts.now.getTime() - created;
  const limits = group.hooks.map((h) => h.waitTimeoutMs || opts.limitMs);
  if (waited > Math.max(...limits)) {
    const limit = Math.max(...limits);
    return { state: 'fail', reason: `not executed: container ${group.container} was not ${waitForReady ? 'ready' : 'running'} within ${Math.round(limit / 1000)}s` };
  }
  return { state: 'wait', why: opts.podVolumesDone ? `container ${group.container} is not ${waitForReady ? 'ready' : 'running'} yet` : 'its pod volume restores are not done' };
}
