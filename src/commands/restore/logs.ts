import { Args } from '@oclif/core';
import { OperationLogsCommand } from '../../cli/logs.js';

export default class RestoreLogs extends OperationLogsCommand {
  static override summary = "Print a restore's log.";
  static override args = { name: Args.string({ required: true, description: 'Name of the restore.' }) };
  protected readonly kind = 'restore';
}
