import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { podVolumeFlags, runPodVolumeCommand } from '../../cli/data-mover-command.js';
import { runPodVolumeRestore } from '../../agent/microservice/pod-volume.js';

export default class PodVolumeRestoreCommand extends BaseCommand<typeof PodVolumeRestoreCommand> {
  static override summary = 'Restore one pod volume for a PodVolumeRestore. Runs in the data-mover pod the node-agent creates.';
  static override hidden = true;
  static override flags = {
    ...podVolumeFlags,
    'pod-volume-restore': Flags.string({ description: 'The PodVolumeRestore to carry out.', required: true }),
  };

  async run(): Promise<void> {
    await runPodVolumeCommand({ name: this.flags['pod-volume-restore'], kind: 'PVR', flags: this.flags, run: runPodVolumeRestore });
  }
}
