import { defineDataMoverCommand } from '../../cli/data-mover-command.js';
import { runDataUpload } from '../../agent/microservice/data-mover.js';

export default defineDataMoverCommand({
  summary: 'Move one volume snapshot\'s data into the repository for a DataUpload. Runs in the backup pod the node-agent creates.',
  objectFlag: 'data-upload',
  objectKind: 'DataUpload',
  kind: 'DU',
  backup: true,
  volumeMode: true,
  run: runDataUpload,
});
