import { Args } from '@oclif/core';
import { Kinds, parseBackupRepository, type BackupRepository } from '../../api/index.js';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatTable, render, type Column } from '../../cli/output.js';
import { connect } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';

/** Velero's `repo get` table: name, phase (New until the controller has looked), last maintenance time. */
export const repositoryColumns: readonly Column<BackupRepository>[] = [
  { header: 'name', value: (r) => r.metadata.name ?? '' },
  { header: 'status', value: (r) => r.status?.phase ?? 'New' },
  { header: 'last maintenance', value: (r) => r.status?.lastMaintenanceTime ?? '<never>' },
];

export default class RepoGet extends BaseCommand<typeof RepoGet> {
  static override summary = 'List backup repositories (BackupRepository objects), or show the named ones.';
  static override description = 'One repository per storage location and volume namespace holds the fs-backup data of that namespace.';
  static override args = { names: Args.string({ description: 'Names of repositories to show (default: all).' }) };
  static override strict = false;
  static override flags = { ...outputFlag };

  async run(): Promise<void> {
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const client = customClient<BackupRepository>(kube, Kinds.BackupRepository, parseBackupRepository);
    const names = this.positional;
    const items = await selectObjects(client, { namespace: this.flags.namespace, names, what: 'backup repository' });
    const value = names.length === 1 ? items[0] : asList(items);
    this.out(render(this.flags.output, value, () => formatTable(repositoryColumns, items)));
  }
}
