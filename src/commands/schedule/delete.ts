import { Args } from '@oclif/core';
import type { Schedule } from '../../api/index.js';
import { DeleteCommand } from '../../cli/delete-command.js';
import { confirmFlag, selectionFlags } from '../../cli/selection.js';
import { scheduleClient } from '../../cli/schedules.js';
import type { Kube } from '../../kube/client.js';
import type { CustomClient } from '../../kube/custom.js';

export default class ScheduleDelete extends DeleteCommand<Schedule> {
  static override summary = 'Delete schedules (their backups stay, unless the schedule owns them: --use-owner-references-in-backup).';
  static override description = 'Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> schedule delete nightly --confirm', '<%= config.bin %> schedule delete --selector team=shop --confirm', '<%= config.bin %> schedule delete --all --confirm'];
  static override args = { names: Args.string({ description: 'Names of schedules to delete.' }) };
  static override flags = { ...selectionFlags('Delete', 'schedules'), ...confirmFlag };
  protected readonly kind = 'schedule';

  protected client(kube: Kube) {
    return scheduleClient(kube);
  }

  protected async deleteOne(s: Schedule, ctx: { namespace: string; client: CustomClient<Schedule> }): Promise<void> {
    await ctx.client.delete(ctx.namespace, s.metadata.name ?? '');
    this.out(`Schedule deleted: ${s.metadata.name}`);
  }
}
