import { Args, Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { formatTable, render } from '../../cli/output.js';
import { UsageError } from '../../base/errors.js';
import { openRepository, readPassword, repoFlags, toCliError } from '../../datapath/cli-support.js';

export default class RepoKey extends BaseCommand<typeof RepoKey> {
  static override summary = 'Manage repository passwords: list, add, remove (rotate = add the new one, then remove the old one).';
  static override description = 'Passwords wrap the repository master keys; adding or removing one never re-encrypts data.';
  static override args = {
    action: Args.string({ description: 'list | add | remove', required: true, options: ['list', 'add', 'remove'] }),
    id: Args.string({ description: 'Key ID (or unique prefix) to remove.' }),
  };
  static override flags = {
    ...repoFlags,
    ...outputFlag,
    'new-password-file': Flags.string({ description: 'File holding the password to add (default: $CAIRN_NEW_REPO_PASSWORD).' }),
  };

  async run(): Promise<void> {
    try {
      const repo = await openRepository(this.flags);
      switch (this.args.action) {
        case 'list': {
          const keys = await repo.keyRing.list();
          this.out(
            render(this.flags.output, keys, (rows) =>
              formatTable(
                [
                  { header: 'id', value: (k) => (k.current ? '*' : ' ') + k.id.slice(0, 12) },
                  { header: 'user', value: (k) => k.username },
                  { header: 'host', value: (k) => k.hostname },
                  { header: 'created', value: (k) => k.created },
                ],
                rows,
              ),
            ),
          );
          return;
        }
        case 'add': {
          const pw = readPassword(this.flags['new-password-file'], 'CAIRN_NEW_REPO_PASSWORD', '--new-password-file');
          const id = await repo.keyRing.add(pw);
          this.out(render(this.flags.output, { id }, (r) => `added key ${r.id.slice(0, 12)}`));
          return;
        }
        case 'remove': {
          if (!this.args.id) throw new UsageError('id', 'key remove needs the ID of the key to remove (see `cairn repo key list`)');
          const id = await repo.keyRing.remove(this.args.id);
          this.out(render(this.flags.output, { id }, (r) => `removed key ${r.id.slice(0, 12)}`));
          return;
        }
      }
    } catch (err) {
      throw toCliError(err);
    }
  }
}
