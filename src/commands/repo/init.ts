import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { render } from '../../cli/output.js';
import { openStore, readPassword, rememberNewRepository, repoFlags, toCliError } from '../../datapath/cli-support.js';
import { Repository } from '../../datapath/repository.js';

export default class RepoInit extends BaseCommand<typeof RepoInit> {
  static override summary = 'Create an encrypted repository (filesystem path or S3 URL).';
  static override flags = { ...repoFlags, ...outputFlag };

  async run(): Promise<void> {
    try {
      const store = await openStore(this.flags.repo, this.flags['store-retry-timeout']);
      const repo = await Repository.init({ store, password: readPassword(this.flags['password-file']) });
      rememberNewRepository(this.flags.repo, repo);
      const result = { id: repo.config.id, location: store.description, keyId: repo.keyId };
      this.out(render(this.flags.output, result, (r) => `created repository ${r.id} at ${r.location}`));
    } catch (err) {
      throw toCliError(err);
    }
  }
}
