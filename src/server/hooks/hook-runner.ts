/**
 * Runs a pod's exec hooks in order, as Velero's hook handler does: every hook counts as attempted; a hook that
 * fails counts as failed and its error is returned (the caller puts it in the results, so the backup or restore is
 * PartiallyFailed); after a failed `onError: Fail` hook the rest are not run. The output of each hook goes to the
 * log given (the backup's or restore's own log). A pod that has already ended (Succeeded/Failed) runs nothing.
 */
import type { Logger } from '../../base/logger.js';
import { ExecError, type PodExecutor } from '../../kube/pod-exec.js';
import { podName, type HookPod, type ResolvedExecHook } from './backup-hooks.js';

export interface HookRunOutcome {
  attempted: number;
  failed: number;
  /** One line per failed hook. */
  errors: string[];
  /** A hook with onError Fail failed: the pod's item fails (pre) and its remaining hooks were not run. */
  failedHard: boolean;
  /** The hooks after that one, which were not run. */
  notRun: ResolvedExecHook[];
}

export const NO_HOOKS: HookRunOutcome = { attempted: 0, failed: 0, errors: [], failedHard: false, notRun: [] };

export function addOutcomes(a: HookRunOutcome, b: HookRunOutcome): HookRunOutcome {
  return { attempted: a.attempted + b.attempted, failed: a.failed + b.failed, errors: [...a.errors, ...b.errors], failedHard: a.failedHard || b.failedHard, notRun: [...a.notRun, ...b.notRun] };
}

export interface RunHooksOptions {
  pod: HookPod & { status?: { phase?: string | undefined } | undefined };
  /** How the hooks are called in messages: "pre", "post", "post-restore". */
  phase: string;
  hooks: readonly ResolvedExecHook[];
  exec: PodExecutor;
  log: Logger;
}

/** The message of a failed hook, naming the hook, the container and the pod. */
export function hookError(hook: ResolvedExecHook, phase: string, pod: HookPod, reason: string): string {
  return `${phase} hook ${hook.name} in container ${hook.container} of pod ${podName(pod)} failed: ${reason}`;
}

export async function runExecHooks(opts: RunHooksOptions): Promise<HookRunOutcome> {
  const { pod, hooks, phase } = opts;
  const outcome: HookRunOutcome = { attempted: hooks.length, failed: 0, errors: [], failedHard: false, notRun: [] };
  const podPhase = pod.status?.phase;
  if (hooks.length && (podPhase === 'Succeeded' || podPhase === 'Failed')) {
    opts.log.info({ pod: podName(pod), hookPhase: phase }, `Pod entered phase ${podPhase} before its ${phase} exec hooks ran; not running them`);
    return outcome;
  }
  for (const [i, hook] of hooks.entries()) {
    const fields = { pod: podName(pod), hookName: hook.name, hookSource: hook.source, hookPhase: phase, hookContainer: hook.container, hookCommand: hook.command, hookOnError: hook.onError, hookTimeout: `${hook.timeoutMs / 1000}s` };
    let reason = hook.problem;
    if (!reason) {
      opts.log.info(fields, 'running exec hook');
      try {
        const r = await opts.exec({ namespace: pod.metadata.namespace ?? '', pod: pod.metadata.name, container: hook.container, command: hook.command, timeoutMs: hook.timeoutMs });
        opts.log.info(fields, `stdout: ${r.stdout}`);
        opts.log.info(fields, `stderr: ${r.stderr}`);
        if (r.truncatedBytes) opts.log.info(fields, `${r.truncatedBytes} more bytes of output were not kept`);
        if (r.exitCode !== 0) reason = `command terminated with exit code ${r.exitCode}`;
      } catch (err) {
        reason = err instanceof ExecError ? err.message : `exec failed: ${(err as Error).message}`;
      }
    }
    if (reason === undefined) continue;
    const message = hookError(hook, phase, pod, reason);
    opts.log.error({ ...fields }, `Error executing hook: ${message}`);
    outcome.failed++;
    outcome.errors.push(message);
    if (hook.onError === 'Fail') {
      outcome.failedHard = true;
      outcome.notRun = hooks.slice(i + 1);
      break;
    }
  }
  return outcome;
}
