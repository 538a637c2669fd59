import { defineDataMoverCommand } from '../../cli/data-mover-command.js';
import { runPodVolumeBackup } from '../../agent/microservice/pod-volume.js';

export default defineDataMoverCommand({
  summary: 'Back up one pod volume for a PodVolumeBackup. Runs in the data-mover pod the node-agent creates.',
  objectFlag: 'pod-volume-backup',
  objectKind: 'PodVolumeBackup',
  kind: 'PVB',
  backup: true,
  volumeMode: false,
  run: runPodVolumeBackup,
});
