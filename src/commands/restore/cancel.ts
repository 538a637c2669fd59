import { Args } from '@oclif/core';
import { selectionFlags, confirmFlag } from '../../cli/selection.js';
import { restoreClient } from '../../cli/restores.js';
import { CancelCommand } from '../../cli/cancel.js';
import type { Kube } from '../../kube/client.js';

export default class RestoreCancel extends CancelCommand {
  static override summary = 'Cancel running restores: stop restoring items and volume data.';
  static override description =
    'Asks the server to cancel each restore (annotation cairn.io/cancel-requested). The server stops restoring items, stops its pod volume restores and data downloads and ends it Canceled; what was restored so far stays. Only a restore that is New or still running can be canceled. Without --confirm it asks first, which needs a terminal.';
  static override examples = ['<%= config.bin %> restore cancel shop-restore --confirm', '<%= config.bin %> restore cancel --all --confirm', '<%= config.bin %> restore cancel -l team=shop'];
  static override args = { names: Args.string({ description: 'Names of restores to cancel.' }) };
  static override flags = { ...selectionFlags('Cancel', 'running restores'), ...confirmFlag };
  protected readonly kind = 'restore';
  protected client(kube: Kube) {
    return restoreClient(kube);
  }
}
