import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { NotFoundError, UsageError } from '../../base/errors.js';
import { parseDuration } from '../../cli/duration.js';
import { backupClient } from '../../cli/backups.js';
import { connect } from '../../kube/client.js';
import { fetchDownload } from '../../server/download/client.js';

export default class BackupDownload extends BaseCommand<typeof BackupDownload> {
  static override summary = "Download a backup's contents (the resources tarball) to a file.";
  static override args = { name: Args.string({ required: true, description: 'Name of the backup.' }) };
  static override flags = {
    output: Flags.string({ char: 'o', description: 'File to write (default: <NAME>-data.tar.gz in the current directory).' }),
    force: Flags.boolean({ description: 'Overwrite the file if it exists.', default: false }),
    timeout: Flags.string({ description: 'How long to wait for the download (Go duration).', default: '1m' }),
  };

  async run(): Promise<void> {
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const name = this.args.name;
    const path = resolve(this.flags.output ?? `${name}-data.tar.gz`);
    if (existsSync(path) && !this.flags.force) throw new UsageError('--output', `file "${path}" already exists; remove it or pass --force`);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    if (!(await backupClient(kube).get(this.flags.namespace, name))) throw new NotFoundError(`backup "${name}" not found in namespace "${this.flags.namespace}"`);
    let body: Buffer;
    try {
      body = await fetchDownload(kube, { namespace: this.flags.namespace, kind: 'BackupContents', name, timeoutMs, logger: this.log_ });
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`no contents stored for backup "${name}"`);
      throw err;
    }
    writeFileSync(path, body);
    this.out(`Backup ${name} has been successfully downloaded to ${path}`);
  }
}
