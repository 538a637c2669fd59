import { Args } from '@oclif/core';
import type { Schedule } from '../../api/index.js';
import { scheduleClient, scheduleColumns } from '../../cli/schedules.js';
import { GetCommand, getFlags } from '../../cli/get-command.js';
import type { Kube } from '../../kube/client.js';

export default class ScheduleGet extends GetCommand<Schedule> {
  static override summary = 'List schedules, or show the named ones.';
  static override examples = ['<%= config.bin %> schedule get', '<%= config.bin %> schedule get nightly -o yaml', '<%= config.bin %> schedule get -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of schedules to show (default: all).' }) };
  static override flags = getFlags('schedules');
  protected readonly kind = 'schedule';

  protected client(kube: Kube) {
    return scheduleClient(kube);
  }

  protected columns() {
    return scheduleColumns();
  }
}
