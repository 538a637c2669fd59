/**
 * `--wait` for backups and restores: follow the object (one read per interval) until it reaches a terminal phase,
 * showing progress (a bar on a TTY, one plain line per change otherwise). Ctrl-C ends the waiting only: the
 * operation keeps running in the cluster. The caller turns the outcome into messages and an exit code.
 */
import { ExitCode } from '../base/errors.js';
import { formatBytes } from '../base/bytes.js';
import type { Progress } from './progress.js';

/** What one read of the followed object shows. */
export interface FollowState {
  phase: string;
  /** Items done / total (backed up or restored). */
  done: number;
  total: number;
  validationErrors?: string[] | undefined;
  failureReason?: string | undefined;
  /** Volume data moved so far / in all (pod volume backups or restores); shown when total > 0. */
  bytesDone?: number | undefined;
  totalBytes?: number | undefined;
}

export type FollowOutcome =
  | { kind: 'finished'; state: FollowState }
  | { kind: 'interrupted'; state: FollowState | undefined }
  | { kind: 'gone'; state: FollowState | undefined };

export interface FollowOptions {
  /** Reads the current state; undefined when the object no longer exists. */
  read: () => Promise<FollowState | undefined>;
  isDone: (phase: string) => boolean;
  progress: Progress;
  /** Aborted on Ctrl-C. */
  signal?: AbortSignal;
  intervalMs?: number;
  /** Reads that may fail in a row (API server hiccups) before the error is reported; default 10. */
  maxReadFailures?: number;
  /** For tests: how to wait between reads. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The progress line text for a state: `InProgress, 12/40 items, 1.5 MiB/20.0 MiB volume data`. */
export function progressText(state: FollowState): string {
  let text = state.total > 0 ? `${state.phase}, ${state.done}/${state.total} items` : state.phase;
  if ((state.totalBytes ?? 0) > 0) text += `, ${formatBytes(state.bytesDone ?? 0)}/${formatBytes(state.totalBytes ?? 0)} volume data`;
  return text;
}

export async function follow(opts: FollowOptions): Promise<FollowOutcome> {
  const sleep = opts.sleep ?? abortableSleep;
  const interval = opts.intervalMs ?? 1000;
  const maxFailures = opts.maxReadFailures ?? 10;
  let last: FollowState | undefined;
  let failures = 0;
  for (;;) {
    if (opts.signal?.aborted) {
      opts.progress.stop();
      return { kind: 'interrupted', state: last };
    }
    let state: FollowState | undefined;
    try {
      state = await opts.read();
      failures = 0;
    } catch (err) {
      // A transient API error must not end the wait (the operation goes on); a persistent one is reported.
      if (++failures >= maxFailures) {
        opts.progress.stop();
        throw err;
      }
      await sleep(interval, opts.signal);
      continue;
    }
    if (!state) {
      opts.progress.stop();
      return { kind: 'gone', state: last };
    }
    last = state;
    opts.progress.update(state.done, state.total, progressText(state));
    if (opts.isDone(state.phase)) {
      opts.progress.stop();
      return { kind: 'finished', state };
    }
    await sleep(interval, opts.signal);
  }
}

/** Exit code of `--wait`: 0 only for Completed; 1 for any other end; 130 when interrupted. */
export function exitCodeForOutcome(outcome: FollowOutcome): number {
  if (outcome.kind === 'interrupted') return ExitCode.Interrupted;
  if (outcome.kind === 'gone') return ExitCode.Failed;
  return outcome.state.phase === 'Completed' ? ExitCode.Ok : ExitCode.Failed;
}

export interface WaitMessages {
  /** Lines for stdout (Velero's wording with `cairn` hints). */
  stdout: string[];
  /** Lines for stderr (why the exit code is not 0). */
  stderr: string[];
}

/** What the user reads at the end of `--wait` for `kind` ("backup" | "restore") `name`. */
export function outcomeMessages(kind: 'backup' | 'restore', name: string, outcome: FollowOutcome): WaitMessages {
  const Kind = kind === 'backup' ? 'Backup' : 'Restore';
  const hint = `\`cairn ${kind} describe ${name}\``;
  if (outcome.kind === 'interrupted') {
    return { stdout: [], stderr: [`Stopped waiting; the ${kind} continues in the background; see ${hint}.`] };
  }
  if (outcome.kind === 'gone') {
    return { stdout: [], stderr: [`${Kind} "${name}" was deleted while waiting for it.`] };
  }
  const { phase, validationErrors, failureReason } = outcome.state;
  const stdout = [`${Kind} completed with status: ${phase}. You may check for more information using the commands ${hint} and \`cairn ${kind} logs ${name}\`.`];
  const stderr: string[] = [];
  if (phase === 'FailedValidation') {
    stderr.push(`${Kind} "${name}" failed validation:`);
    for (const e of validationErrors ?? []) stderr.push(`  ${e}`);
  } else if (phase !== 'Completed') {
    stderr.push(`${Kind} "${name}" finished with status ${phase}${failureReason ? `: ${failureReason}` : ''}.`);
  }
  return { stdout, stderr };
}

/** Aborts the returned signal on the first SIGINT (and stops listening once `dispose` is called). */
export function interruptSignal(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onInt = () => controller.abort();
  process.once('SIGINT', onInt);
  return { signal: controller.signal, dispose: () => process.removeListener('SIGINT', onInt) };
}

export interface WaitAndReportOptions {
  kind: 'backup' | 'restore';
  name: string;
  read: () => Promise<FollowState | undefined>;
  isDone: (phase: string) => boolean;
  /** Progress display; default: a bar on a TTY stderr, plain lines otherwise. */
  progress: Progress;
  out?: (line: string) => void;
  err?: (line: string) => void;
  signal?: AbortSignal;
  intervalMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The whole `--wait`: announce, follow, report; returns the exit code. */
export async function waitAndReport(opts: WaitAndReportOptions): Promise<number> {
  const out = opts.out ?? ((l: string) => process.stdout.write(l + '\n'));
  const err = opts.err ?? ((l: string) => process.stderr.write(l + '\n'));
  out(`Waiting for ${opts.kind} to complete. You may safely press ctrl-c to stop waiting - your ${opts.kind} will continue in the background.`);
  const outcome = await follow({
    read: opts.read,
    isDone: opts.isDone,
    progress: opts.progress,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
  });
  const messages = outcomeMessages(opts.kind, opts.name, outcome);
  messages.stdout.forEach(out);
  messages.stderr.forEach(err);
  return exitCodeForOutcome(outcome);
}
