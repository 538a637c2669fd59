import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CairnError } from '../../base/errors.js';
import { formatJson, formatYaml } from '../../cli/output.js';
import { connect } from '../../kube/client.js';
import { isAlreadyExists } from '../../kube/errors.js';
import { buildLocation, locationClient, unsetOtherDefaults } from '../../cli/backup-locations.js';

export default class BackupLocationCreate extends BaseCommand<typeof BackupLocationCreate> {
  static override summary = 'Create a backup storage location.';
  static override examples = [
    '<%= config.bin %> backup-location create secondary --provider aws --bucket backups-2 --config region=us-east-1,s3Url=http://minio:9000,s3ForcePathStyle=true --credential cloud-credentials=cloud',
  ];
  static override args = { name: Args.string({ required: true, description: 'Name of the location.' }) };
  static override flags = {
    provider: Flags.string({ description: 'aws (any S3-compatible store), filesystem, or the name of an installed ObjectStore plugin (e.g. gcp).', required: true }),
    bucket: Flags.string({ description: 'Bucket (aws) or directory under the root (filesystem).', required: true }),
    prefix: Flags.string({ description: 'Prefix inside the bucket.' }),
    config: Flags.string({ description: 'Provider configuration, key=value pairs separated by commas.' }),
    credential: Flags.string({ description: 'Secret and key in the install namespace holding credentials, as secret-name=key.' }),
    default: Flags.boolean({ description: 'Make this the default location (the others lose the mark).', default: false }),
    'access-mode': Flags.string({ description: 'ReadWrite or ReadOnly.', default: 'ReadWrite' }),
    'backup-sync-period': Flags.string({ description: 'How often to sync backups from storage (e.g. 1m; 0 disables).' }),
    'validation-frequency': Flags.string({ description: 'How often to validate the location (e.g. 1m; 0 disables).' }),
    cacert: Flags.string({ description: 'PEM file with the CA bundle to trust for the object store.' }),
    labels: Flags.string({ description: 'Labels to put on the location, key=value pairs separated by commas.' }),
    output: Flags.option({ char: 'o', options: ['json', 'yaml'] as const, description: 'Print the object instead of creating it.' })(),
  };

  async run(): Promise<void> {
    const location = buildLocation({ ...this.flags, name: this.args.name });
    if (this.flags.output) {
      this.out(this.flags.output === 'json' ? formatJson(location) : formatYaml(location));
      return;
    }
    const client = locationClient(connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    try {
      await client.create(location);
    } catch (err) {
      if (isAlreadyExists((err as CairnError).cause)) throw new CairnError(`backup storage location "${this.args.name}" already exists; use 'backup-location set' to change it`);
      throw err;
    }
    if (this.flags.default) await unsetOtherDefaults(client, this.flags.namespace, this.args.name);
    this.out(`Backup storage location "${this.args.name}" configured successfully.`);
  }
}
