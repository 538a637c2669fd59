import { Args } from '@oclif/core';
import { SchedulePauseCommand } from '../../cli/schedule-pause.js';

export default class ScheduleUnpause extends SchedulePauseCommand {
  static override summary = 'Unpause schedules. A backup due while paused is made at once unless --skip-immediately (or the server default) skips it.';
  static override examples = ['<%= config.bin %> schedule unpause nightly', '<%= config.bin %> schedule unpause nightly --skip-immediately', '<%= config.bin %> schedule unpause --all'];
  static override args = { names: Args.string({ description: 'Names of schedules to unpause.' }) };
  protected readonly paused = false;
}
