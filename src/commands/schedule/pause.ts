import { Args } from '@oclif/core';
import { SchedulePauseCommand } from '../../cli/schedule-pause.js';

export default class SchedulePause extends SchedulePauseCommand {
  static override summary = 'Pause schedules: they make no backups until unpaused.';
  static override examples = ['<%= config.bin %> schedule pause nightly', '<%= config.bin %> schedule pause --selector team=shop', '<%= config.bin %> schedule pause --all'];
  static override args = { names: Args.string({ description: 'Names of schedules to pause.' }) };
  protected readonly paused = true;
}
