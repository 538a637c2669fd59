import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { dataMoverFlags, listingCacheFlag, uploadRateFlag, runDataMoverCommand, volumeModeFlag } from '../../cli/data-mover-command.js';
import { runDataUpload } from '../../agent/microservice/data-mover.js';

export default class DataMoverBackupCommand extends BaseCommand<typeof DataMoverBackupCommand> {
  static override summary = 'Move one volume snapshot\'s data into the repository for a DataUpload. Runs in the backup pod the node-agent creates.';
  static override hidden = true;
  static override flags = {
    ...dataMoverFlags,
    'upload-bytes-per-second': uploadRateFlag,
    'cache-dir': listingCacheFlag,
    'volume-mode': volumeModeFlag,
    'data-upload': Flags.string({ description: 'The DataUpload to carry out.', required: true }),
  };

  async run(): Promise<void> {
    await runDataMoverCommand({ name: this.flags['data-upload'], kind: 'DU', flags: this.flags, run: runDataUpload });
  }
}
