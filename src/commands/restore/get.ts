import { Args } from '@oclif/core';
import type { Restore } from '../../api/index.js';
import { restoreClient, restoreColumns } from '../../cli/restores.js';
import { GetCommand, getFlags } from '../../cli/get-command.js';
import type { Kube } from '../../kube/client.js';

export default class RestoreGet extends GetCommand<Restore> {
  static override summary = 'List restores, or show the named ones.';
  static override args = { names: Args.string({ description: 'Names of restores to show (default: all).' }) };
  static override flags = getFlags('restores');
  protected readonly kind = 'restore';

  protected client(kube: Kube) {
    return restoreClient(kube);
  }

  protected columns() {
    return restoreColumns();
  }
}
