import { Args, Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { render } from '../../cli/output.js';
import { OperationFailedError } from '../../base/errors.js';
import { createProgress } from '../../cli/progress.js';
import { formatBytes } from '../../base/bytes.js';
import { interruptSignal, openRepository, repoFlags, toCliError } from '../../datapath/cli-support.js';
import { bootRestoreWorkers, restore } from '../../datapath/restorer.js';

export default class RepoRestore extends BaseCommand<typeof RepoRestore> {
  static override summary = 'Restore a snapshot (or a path inside it) into a directory.';
  static override args = {
    snapshot: Args.string({ description: 'Snapshot ID, unique ID prefix, or "latest".', required: true }),
    dir: Args.string({ description: 'Target directory (created if missing).', required: true }),
  };
  static override flags = {
    ...repoFlags,
    ...outputFlag,
    path: Flags.string({ description: 'Restore only this path inside the snapshot; its contents land in the target.' }),
    'no-ownership': Flags.boolean({ description: 'Do not restore file owners (uid/gid).' }),
  };

  async run(): Promise<void> {
    const progress = process.stderr.isTTY ? createProgress({ label: 'restore' }) : undefined;
    let result;
    try {
      const repo = await openRepository(this.flags, { prefetchIndex: true, storeReady: bootRestoreWorkers });
      result = await restore({
        repository: repo,
        snapshotId: this.args.snapshot,
        target: this.args.dir,
        ...(this.flags.path ? { path: this.flags.path } : {}),
        ownership: !this.flags['no-ownership'],
        signal: interruptSignal(),
        ...(progress ? { onProgress: (p) => progress.update(p.doneBytes, p.totalBytes, `${formatBytes(p.doneBytes)} / ${formatBytes(p.totalBytes)}, ${p.doneFiles} files`) } : {}),
      });
      progress?.stop('done');
    } catch (err) {
      progress?.stop('failed');
      throw toCliError(err);
    }
    const summary = { snapshotId: result.snapshotId, ...result.stats, errors: result.errors };
    this.out(render(this.flags.output, summary, (r) => `restored ${r.files} files, ${r.dirs} directories, ${formatBytes(r.bytes)} from snapshot ${r.snapshotId.slice(0, 8)}`));
    if (result.errors.length > 0) {
      for (const e of result.errors.slice(0, 20)) process.stderr.write(`  ${e.path}: ${e.reason}\n`);
      throw new OperationFailedError(`${result.errors.length} item(s) could not be restored completely (listed above)`);
    }
  }
}
