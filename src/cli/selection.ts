/**
 * The "NAME... | --selector | --all" choice of the commands that act on several objects at once (backup and restore
 * cancel and delete, schedule delete, pause and unpause): their flags, the checks made before anything is read (a
 * bad choice is exit code 2 with nothing changed), and the question asked before deleting.
 */
import { confirm } from '@inquirer/prompts';
import { Flags } from '@oclif/core';
import { UsageError } from '../base/errors.js';
import { parseLabelSelector } from './label-selector.js';
import { canPrompt } from './progress.js';

export interface SelectionFlagValues {
  all: boolean;
  selector?: string | undefined;
}

/** `--all` and `-l/--selector`, described as "<Verb> all <objects>." and "<Verb> the <objects> whose labels match…". */
export function selectionFlags(verb: string, objects: string) {
  return {
    all: Flags.boolean({ description: `${verb} all ${objects}.`, default: false }),
    selector: Flags.string({ char: 'l', description: `${verb} the ${objects} whose labels match this selector.` }),
  };
}

export const confirmFlag = {
  confirm: Flags.boolean({ description: 'Do not ask for confirmation.', default: false }),
};

/** Exactly one of names, `--selector` and `--all`, and a selector that parses. */
export function checkSelection(kind: string, names: readonly string[], flags: SelectionFlagValues): void {
  const given = [names.length > 0, flags.all, Boolean(flags.selector)].filter(Boolean).length;
  if (given === 0) throw new UsageError('NAMES', `give ${kind} names, --selector or --all`);
  if (given > 1) throw new UsageError('--all', `use only one of ${kind} names, --selector and --all`);
  if (flags.selector) parseLabelSelector('--selector', flags.selector);
}

/** The selection checks, and without `--confirm` a terminal to ask on. */
export function checkConfirmedSelection(kind: string, names: readonly string[], flags: SelectionFlagValues & { confirm: boolean }): void {
  checkSelection(kind, names, flags);
  if (!flags.confirm && !canPrompt()) throw new UsageError('--confirm', 'required when no terminal is attached');
}

/**
 * Velero's question before a delete ("Delete backups a, b? Are you sure you want to continue?"), unless `--confirm`
 * was given; on no it says "Cancelled." and answers false.
 */
export async function confirmDeletion(kind: string, names: readonly string[], confirmed: boolean, out: (line: string) => void): Promise<boolean> {
  if (confirmed) return true;
  const ok = await confirm({ message: `Delete ${kind}${names.length > 1 ? 's' : ''} ${names.join(', ')}? Are you sure you want to continue?`, default: false });
  if (!ok) out('Cancelled.');
  return ok;
}
