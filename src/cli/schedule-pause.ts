/** `schedule pause|unpause`: which schedules (names, --selector or --all) and Velero's runPause on each. */
import { Flags } from '@oclif/core';
import { connect } from '../kube/client.js';
import { BaseCommand } from './base-command.js';
import { pauseChange, scheduleClient } from './schedules.js';
import { selectObjects } from './select.js';
import { checkSelection } from './selection.js';

export const pauseFlags = {
  all: Flags.boolean({ description: 'All schedules.', default: false }),
  selector: Flags.string({ char: 'l', description: 'The schedules whose labels match this selector.' }),
  'skip-immediately': Flags.boolean({ allowNo: true, description: 'Skip the backup due right away when unpaused (unset: the server default).' }),
};

export interface RunPauseOptions {
  flags: { all: boolean; selector?: string | undefined; 'skip-immediately'?: boolean | undefined; namespace: string; kubeconfig?: string | undefined; context?: string | undefined };
  names: readonly string[];
  paused: boolean;
  out: (line: string) => void;
}

export async function runPause(opts: RunPauseOptions): Promise<void> {
  const { flags, names } = opts;
  checkSelection('schedule', names, flags);
  const client = scheduleClient(connect({ kubeconfig: flags.kubeconfig, context: flags.context }));
  const schedules = await selectObjects(client, { namespace: flags.namespace, names, selector: flags.selector, what: 'schedule' });
  if (!schedules.length) {
    opts.out('No schedules found');
    return;
  }
  for (const schedule of schedules) {
    const change = pauseChange(schedule, opts.paused, flags['skip-immediately']);
    if (change.change) {
      await client.update(flags.namespace, schedule.metadata.name ?? '', (s) => change.apply(s));
    }
    opts.out(change.message);
  }
}

/** The command behind `schedule pause` and `schedule unpause`: each names its texts and which way it turns. */
export abstract class SchedulePauseCommand extends BaseCommand<typeof SchedulePauseCommand> {
  static override strict = false;
  static override flags = pauseFlags;
  protected abstract readonly paused: boolean;

  protected override readonly triStateFlags = ['skip-immediately'];

  async run(): Promise<void> {
    await runPause({ flags: this.flags, names: this.positional, paused: this.paused, out: (l) => this.out(l) });
  }
}
