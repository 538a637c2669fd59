import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { dataMoverFlags, runDataMoverCommand, volumeModeFlag } from '../../cli/data-mover-command.js';
import { runDataDownload } from '../../agent/microservice/data-mover.js';

export default class DataMoverRestoreCommand extends BaseCommand<typeof DataMoverRestoreCommand> {
  static override summary = 'Restore one moved snapshot into a volume for a DataDownload. Runs in the restore pod the node-agent creates.';
  static override hidden = true;
  static override flags = {
    ...dataMoverFlags,
    'volume-mode': volumeModeFlag,
    'data-download': Flags.string({ description: 'The DataDownload to carry out.', required: true }),
  };

  async run(): Promise<void> {
    await runDataMoverCommand({ name: this.flags['data-download'], kind: 'DD', flags: this.flags, run: runDataDownload });
  }
}
