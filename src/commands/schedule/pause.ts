import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { normaliseTriStateArgv } from '../../cli/backups.js';
import { pauseFlags, runPause } from '../../cli/schedule-pause.js';

export default class SchedulePause extends BaseCommand<typeof SchedulePause> {
  static override summary = 'Pause schedules: they make no backups until unpaused.';
  static override examples = ['<%= config.bin %> schedule pause nightly', '<%= config.bin %> schedule pause --selector team=shop', '<%= config.bin %> schedule pause --all'];
  static override args = { names: Args.string({ description: 'Names of schedules to pause.' }) };
  static override strict = false;
  static override flags = pauseFlags;

  public override async init(): Promise<void> {
    this.argv = normaliseTriStateArgv(this.argv, ['skip-immediately']);
    await super.init();
  }

  async run(): Promise<void> {
    await runPause({ flags: this.flags, names: this.positional, paused: true, out: (l) => this.out(l) });
  }
}
