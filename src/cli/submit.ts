/**
 * What `backup create` and `restore create` do once their object is built: create it (a name already taken is a
 * usage error), say so, and either point at describe/logs or, with `--wait`, follow it to the end with a progress
 * display; Ctrl-C ends the waiting only.
 */
import { Flags } from '@oclif/core';
import { CairnError, UsageError } from '../base/errors.js';
import { isAlreadyExists } from '../kube/errors.js';
import { volumeBytes } from './backups.js';
import { createProgress } from './progress.js';
import { interruptSignal, waitAndReport, type FollowState } from './wait.js';

export interface SubmitOptions {
  kind: 'backup' | 'restore';
  name: string;
  namespace: string;
  /** Creates the object in the cluster. */
  create: () => Promise<unknown>;
  wait: boolean;
  isDone: (phase: string) => boolean;
  /** One read of the object while waiting; undefined once it is gone. */
  read: () => Promise<FollowState | undefined>;
  out: (line: string) => void;
}

/** `--wait` and `-o json|yaml` of `backup create` and `restore create`, worded for the kind. */
export function submitFlags(kind: SubmitOptions['kind']) {
  const title = `${kind[0]?.toUpperCase() ?? ''}${kind.slice(1)}`;
  return {
    wait: Flags.boolean({ char: 'w', description: `Wait for the ${kind} to finish; exit non-zero unless it Completed.`, default: false }),
    output: Flags.option({ char: 'o', options: ['json', 'yaml'] as const, description: `Print the ${title} instead of submitting it.` })(),
  };
}

/** Creates the object and, with `wait`, follows it; returns the exit code (0 when not waiting). */
export async function submitAndFollow(o: SubmitOptions): Promise<number> {
  const title = `${o.kind[0]?.toUpperCase() ?? ''}${o.kind.slice(1)}`;
  try {
    await o.create();
  } catch (err) {
    if (isAlreadyExists((err as CairnError).cause)) throw new UsageError('NAME', `${o.kind} "${o.name}" already exists in namespace "${o.namespace}"`);
    throw err;
  }
  o.out(`${title} request "${o.name}" submitted successfully.`);
  if (!o.wait) {
    o.out(`Run \`cairn ${o.kind} describe ${o.name}\` or \`cairn ${o.kind} logs ${o.name}\` for more details.`);
    return 0;
  }
  const interrupt = interruptSignal();
  try {
    return await waitAndReport({ kind: o.kind, name: o.name, isDone: o.isDone, progress: createProgress({ label: `${title} ${o.name}` }), signal: interrupt.signal, out: o.out, read: o.read });
  } finally {
    interrupt.dispose();
  }
}

/** The part of a Backup's or Restore's status a wait shows. */
export interface FollowedStatus {
  phase?: string | undefined;
  progress?: { totalItems?: number | undefined } | null | undefined;
  validationErrors?: string[] | null | undefined;
  failureReason?: string | undefined;
}

/** A status as one wait reading: `done` is the items backed up or restored so far. */
export function followState(s: FollowedStatus, done: number | undefined): FollowState {
  return { phase: s.phase ?? 'New', done: done ?? 0, total: s.progress?.totalItems ?? 0, validationErrors: s.validationErrors ?? undefined, failureReason: s.failureReason };
}

/**
 * One reading of a submitted object while waiting: its status (`done`: the items done so far) and the bytes of its
 * volume operations, which are extra information: a failed read of them never ends the wait.
 */
export async function followReading(status: FollowedStatus, done: number | undefined, volumeOperations: () => Promise<Parameters<typeof volumeBytes>[0]>): Promise<FollowState> {
  const bytes = await volumeOperations().then(volumeBytes, () => ({}));
  return { ...followState(status, done), ...bytes };
}
