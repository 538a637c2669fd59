import { Args } from '@oclif/core';
import { OperationLogsCommand } from '../../cli/logs.js';

export default class BackupLogs extends OperationLogsCommand {
  static override summary = "Print a backup's log.";
  static override args = { name: Args.string({ required: true, description: 'Name of the backup.' }) };
  protected readonly kind = 'backup';
}
