import { Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { render } from '../../cli/output.js';
import { OperationFailedError } from '../../base/errors.js';
import { formatBytes } from '../../base/bytes.js';
import { interruptSignal, openRepository, repoFlags, toCliError } from '../../datapath/cli-support.js';
import { check } from '../../datapath/check.js';

export default class RepoCheck extends BaseCommand<typeof RepoCheck> {
  static override summary = 'Verify a repository: structure and authentication; with --read-data, every byte of data.';
  static override flags = {
    ...repoFlags,
    ...outputFlag,
    'read-data': Flags.boolean({ description: 'Read and verify all pack data, not only headers, indexes and trees.' }),
  };

  async run(): Promise<void> {
    let result;
    try {
      const repo = await openRepository(this.flags);
      result = await check({ repository: repo, readData: this.flags['read-data'], signal: interruptSignal() });
    } catch (err) {
      throw toCliError(err);
    }
    this.out(
      render(this.flags.output, result, (r) =>
        [
          `${r.snapshots} snapshots, ${r.packs} packs, ${r.blobs} blobs${r.readBytes ? `, ${formatBytes(r.readBytes)} read` : ''}`,
          ...r.warnings.map((w) => `warning: ${w}`),
          ...r.errors.map((e) => `error: ${e}`),
          r.errors.length === 0 ? 'no errors found' : `${r.errors.length} error(s) found`,
        ].join('\n'),
      ),
    );
    if (result.errors.length > 0) throw new OperationFailedError(`repository check found ${result.errors.length} error(s): ${result.errors[0]}`);
  }
}
