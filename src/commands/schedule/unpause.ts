import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { normaliseTriStateArgv } from '../../cli/backups.js';
import { pauseFlags, runPause } from '../../cli/schedule-pause.js';

export default class ScheduleUnpause extends BaseCommand<typeof ScheduleUnpause> {
  static override summary = 'Unpause schedules. A backup due while paused is made at once unless --skip-immediately (or the server default) skips it.';
  static override examples = ['<%= config.bin %> schedule unpause nightly', '<%= config.bin %> schedule unpause nightly --skip-immediately', '<%= config.bin %> schedule unpause --all'];
  static override args = { names: Args.string({ description: 'Names of schedules to unpause.' }) };
  static override strict = false;
  static override flags = pauseFlags;

  public override async init(): Promise<void> {
    this.argv = normaliseTriStateArgv(this.argv, ['skip-immediately']);
    await super.init();
  }

  async run(): Promise<void> {
    await runPause({ flags: this.flags, names: this.positional, paused: false, out: (l) => this.out(l) });
  }
}
