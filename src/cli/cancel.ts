/**
 * `backup cancel` and `restore cancel`: which of the chosen objects can be canceled, and the request itself (the
 * annotation `cairn.io/cancel-requested`, written only while the object still runs). Named objects are all checked
 * before anything is written, so a bad name changes nothing (exit code 2, docs/cli.md).
 */
import { confirm } from '@inquirer/prompts';
import { Args } from '@oclif/core';
import { CANCELABLE_BACKUP_PHASES, CANCELABLE_RESTORE_PHASES, isCancelRequested, requestCancel, type Backup, type Restore } from '../api/index.js';
import { OperationFailedError, UsageError } from '../base/errors.js';
import { connect, type Kube } from '../kube/client.js';
import type { CustomClient } from '../kube/custom.js';
import { BaseCommand } from './base-command.js';
import { selectObjects } from './select.js';
import { checkConfirmedSelection, confirmFlag, selectionFlags } from './selection.js';

export type CancelKind = 'backup' | 'restore';

type Cancelable = Backup | Restore;

export type CancelVerdict =
  /** Still running (or not started): the request is written. */
  | { action: 'request' }
  /** Canceled already, or being canceled: nothing to write, said as such. */
  | { action: 'already'; message: string }
  /** Finished: cannot be canceled. */
  | { action: 'refuse'; message: string };

function cancelablePhases(kind: CancelKind): ReadonlySet<string> {
  return kind === 'backup' ? CANCELABLE_BACKUP_PHASES : CANCELABLE_RESTORE_PHASES;
}

export function cancelVerdict(kind: CancelKind, obj: Cancelable): CancelVerdict {
  const name = obj.metadata?.name ?? '';
  const phase = obj.status?.phase ?? '';
  if (phase === 'Canceled') return { action: 'already', message: `${kind} "${name}" is already canceled` };
  if (phase === 'Canceling' || (isCancelRequested(obj) && cancelablePhases(kind).has(phase))) return { action: 'already', message: `${kind} "${name}" is already being canceled` };
  if (cancelablePhases(kind).has(phase)) return { action: 'request' };
  return { action: 'refuse', message: `${kind} "${name}" has finished (phase ${phase}); only a ${kind} that is New or still running can be canceled` };
}

export interface CancelPlan<T extends Cancelable> {
  /** To be asked to cancel. */
  request: T[];
  /** Lines for the ones canceled already or being canceled. */
  already: string[];
}

/**
 * What to do with the chosen objects. Named ones must all be cancelable (the first that is not is refused as bad
 * input); with --all or a selector, finished ones are simply passed over.
 */
export function planCancel<T extends Cancelable>(kind: CancelKind, objects: readonly T[], o: { named: boolean }): CancelPlan<T> {
  const plan: CancelPlan<T> = { request: [], already: [] };
  for (const obj of objects) {
    const verdict = cancelVerdict(kind, obj);
    if (verdict.action === 'request') plan.request.push(obj);
    else if (verdict.action === 'already') plan.already.push(verdict.message);
    else if (o.named) throw new UsageError('NAME', verdict.message);
  }
  return plan;
}

export type CancelOutcome = { name: string; requested: true } | { name: string; requested: false; phase: string };

/** Writes the request, unless the object finished (or was canceled) meanwhile. */
export async function requestCancelOf<T extends Cancelable>(kind: CancelKind, client: CustomClient<T>, namespace: string, name: string, now: Date): Promise<CancelOutcome> {
  let requested = false;
  const written = await client.update(namespace, name, (obj) => {
    requested = cancelablePhases(kind).has(obj.status?.phase ?? '');
    // Asked by someone else meanwhile: requested all the same, nothing to write.
    return requested && requestCancel(obj, now);
  });
  return requested ? { name, requested: true } : { name, requested: false, phase: written?.status?.phase ?? 'deleted' };
}

export interface CancelCommandOptions<T extends Cancelable> {
  kind: CancelKind;
  client: CustomClient<T>;
  namespace: string;
  names: readonly string[];
  selector?: string | undefined;
  /** Asks the user (undefined: --confirm was given, do not ask). */
  confirm?: ((message: string) => Promise<boolean>) | undefined;
  out: (line: string) => void;
  now?: () => Date;
}

/**
 * The whole command after its flags are parsed: choose, check, ask, request; says one line per object. Throws
 * NotFoundError (a named object does not exist) or UsageError (a named object has finished) before writing anything,
 * and OperationFailedError when an object finished before its request was written.
 */
export async function cancelObjects<T extends Cancelable>(opts: CancelCommandOptions<T>): Promise<void> {
  const { kind } = opts;
  const Kind = kind === 'backup' ? 'Backup' : 'Restore';
  const chosen = await selectObjects(opts.client, { namespace: opts.namespace, names: opts.names, selector: opts.selector, what: kind });
  const plan = planCancel(kind, chosen, { named: opts.names.length > 0 });
  plan.already.forEach((line) => opts.out(`${line[0]!.toUpperCase()}${line.slice(1)}.`));
  if (!plan.request.length) {
    if (!plan.already.length) opts.out(`No running ${kind}s found`);
    return;
  }
  const names = plan.request.map((o) => o.metadata?.name ?? '');
  if (opts.confirm && !(await opts.confirm(`Cancel ${kind}${names.length > 1 ? 's' : ''} ${names.join(', ')}? Are you sure you want to continue?`))) {
    opts.out('Nothing canceled.');
    return;
  }
  const late: string[] = [];
  for (const name of names) {
    const outcome = await requestCancelOf(kind, opts.client, opts.namespace, name, (opts.now ?? (() => new Date()))());
    if (outcome.requested) {
      opts.out(`Request to cancel ${kind} "${name}" submitted successfully.`);
      opts.out(`The ${kind} ends Canceled once its volume operations have stopped${kind === 'backup' ? ' and what it wrote is deleted' : ''}; see \`cairn ${kind} describe ${name}\`.`);
    } else {
      late.push(`${Kind} "${name}" finished (phase ${outcome.phase}) before it could be canceled`);
    }
  }
  if (late.length) throw new OperationFailedError(late.join('; '));
}

/** The command behind `backup cancel` and `restore cancel`: each names its texts, its kind and its client. */
export abstract class CancelCommand extends BaseCommand<typeof CancelCommand> {
  static override strict = false;
  static override flags = { ...selectionFlags('Cancel', 'running objects'), ...confirmFlag };
  protected abstract readonly kind: CancelKind;
  protected abstract client(kube: Kube): CustomClient<Cancelable>;

  async run(): Promise<void> {
    const names = this.positional;
    checkConfirmedSelection(this.kind, names, this.flags);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    await cancelObjects({
      kind: this.kind,
      client: this.client(kube),
      namespace: this.flags.namespace,
      names,
      selector: this.flags.selector,
      confirm: this.flags.confirm ? undefined : (message) => confirm({ message, default: false }),
      out: (line) => this.out(line),
    });
  }
}

/** What `backup cancel` and `restore cancel` each name: their help texts and their client. */
export interface CancelCommandSpec {
  kind: CancelKind;
  summary: string;
  description: string;
  examples: string[];
  client: (kube: Kube) => CustomClient<Cancelable>;
}

/** The `cancel` command of one kind. */
export function defineCancelCommand(spec: CancelCommandSpec) {
  return class extends CancelCommand {
    static override summary = spec.summary;
    static override description = spec.description;
    static override examples = spec.examples;
    static override args = { names: Args.string({ description: `Names of ${spec.kind}s to cancel.` }) };
    static override flags = { ...selectionFlags('Cancel', `running ${spec.kind}s`), ...confirmFlag };
    protected readonly kind = spec.kind;

    protected client(kube: Kube) {
      return spec.client(kube);
    }
  };
}
