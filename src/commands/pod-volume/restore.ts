import { defineDataMoverCommand } from '../../cli/data-mover-command.js';
import { runPodVolumeRestore } from '../../agent/microservice/pod-volume.js';

export default defineDataMoverCommand({
  summary: 'Restore one pod volume for a PodVolumeRestore. Runs in the data-mover pod the node-agent creates.',
  objectFlag: 'pod-volume-restore',
  objectKind: 'PodVolumeRestore',
  kind: 'PVR',
  backup: false,
  volumeMode: false,
  run: runPodVolumeRestore,
});
