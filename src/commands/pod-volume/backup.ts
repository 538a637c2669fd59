import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { listingCacheFlag, podVolumeFlags, uploadRateFlag, runPodVolumeCommand } from '../../cli/data-mover-command.js';
import { runPodVolumeBackup } from '../../agent/microservice/pod-volume.js';

export default class PodVolumeBackupCommand extends BaseCommand<typeof PodVolumeBackupCommand> {
  static override summary = 'Back up one pod volume for a PodVolumeBackup. Runs in the data-mover pod the node-agent creates.';
  static override hidden = true;
  static override flags = {
    ...podVolumeFlags,
    'upload-bytes-per-second': uploadRateFlag,
    'cache-dir': listingCacheFlag,
    'pod-volume-backup': Flags.string({ description: 'The PodVolumeBackup to carry out.', required: true }),
  };

  async run(): Promise<void> {
    await runPodVolumeCommand({ name: this.flags['pod-volume-backup'], kind: 'PVB', flags: this.flags, run: runPodVolumeBackup });
  }
}
