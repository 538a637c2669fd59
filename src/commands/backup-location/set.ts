import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { connect } from '../../kube/client.js';
import { locationClient, setLocation } from '../../cli/backup-locations.js';

export default class BackupLocationSet extends BaseCommand<typeof BackupLocationSet> {
  static override summary = 'Change a backup storage location: the default mark, its credential or CA bundle.';
  static override args = { name: Args.string({ required: true, description: 'Name of the location.' }) };
  static override flags = {
    default: Flags.boolean({ description: 'Make this the default location (the others lose the mark); --no-default removes it.', allowNo: true }),
    credential: Flags.string({ description: 'Secret and key holding credentials, as secret-name=key.' }),
    cacert: Flags.string({ description: 'PEM file with the CA bundle to trust for the object store.' }),
  };

  async run(): Promise<void> {
    const client = locationClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    await setLocation(client, this.flags.namespace, this.args.name, this.flags);
    this.out(`Backup storage location "${this.args.name}" configured successfully.`);
  }
}
