import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { formatTable, render } from '../../cli/output.js';
import { formatBytes } from '../../base/bytes.js';
import { openRepository, repoFlags, toCliError } from '../../datapath/cli-support.js';

export default class RepoSnapshots extends BaseCommand<typeof RepoSnapshots> {
  static override summary = 'List the snapshots in a repository, oldest first.';
  static override flags = { ...repoFlags, ...outputFlag };

  async run(): Promise<void> {
    try {
      const repo = await openRepository(this.flags);
      const snaps = await repo.snapshots.list();
      this.out(
        render(this.flags.output, snaps, (rows) =>
          formatTable(
            [
              { header: 'id', value: (s) => s.id.slice(0, 8) },
              { header: 'time', value: (s) => s.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z') },
              { header: 'host', value: (s) => s.hostname },
              { header: 'source', value: (s) => s.source },
              { header: 'files', value: (s) => String(s.summary.files) },
              { header: 'size', value: (s) => formatBytes(s.summary.bytes) },
              { header: 'tags', value: (s) => Object.entries(s.tags).map(([k, v]) => `${k}=${v}`).join(',') },
            ],
            rows,
          ),
        ),
      );
    } catch (err) {
      throw toCliError(err);
    }
  }
}
