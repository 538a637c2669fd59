import { defineDataMoverCommand } from '../../cli/data-mover-command.js';
import { runDataDownload } from '../../agent/microservice/data-mover.js';

export default defineDataMoverCommand({
  summary: 'Restore one moved snapshot into a volume for a DataDownload. Runs in the restore pod the node-agent creates.',
  objectFlag: 'data-download',
  objectKind: 'DataDownload',
  kind: 'DD',
  backup: false,
  volumeMode: true,
  run: runDataDownload,
});
