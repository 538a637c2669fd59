import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { DEFAULT_RESTORES_DIR, runRestoreHelper } from '../agent/microservice/restore-helper.js';

export default class RestoreHelper extends BaseCommand<typeof RestoreHelper> {
  static override summary = "The restore-wait init container: waits until every restored volume holds its restore's done marker.";
  static override hidden = true;
  static override strict = false;
  static override args = { restoreUID: Args.string({ description: "The Restore's UID." }) };
  static override flags = {
    'restores-dir': Flags.string({ description: 'Where the volumes to wait for are mounted.', default: DEFAULT_RESTORES_DIR }),
  };

  async run(): Promise<void> {
    if (!this.args.restoreUID || this.positional.length !== 1) {
      process.stdout.write("ERROR: exactly one argument must be provided, the restore's UID\n");
      process.exitCode = 1;
      return;
    }
    await runRestoreHelper({ restoreUID: this.args.restoreUID, restoresDir: this.flags['restores-dir'], print: (line) => process.stdout.write(`${line}\n`) });
  }
}
