import { Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { render } from '../../cli/output.js';
import { formatBytes } from '../../base/bytes.js';
import { interruptSignal, openRepository, repoFlags, toCliError } from '../../datapath/cli-support.js';
import { maintenance } from '../../datapath/maintenance.js';

export default class RepoMaintenance extends BaseCommand<typeof RepoMaintenance> {
  static override summary = 'Remove content no snapshot references and repack partly used packs (takes an exclusive lock).';
  static override flags = {
    ...repoFlags,
    ...outputFlag,
    'grace-period': Flags.integer({ description: 'Minutes during which new packs are never touched (protects interrupted backups about to resume).', default: 60, min: 0 }),
  };

  async run(): Promise<void> {
    try {
      const repo = await openRepository(this.flags);
      const result = await maintenance({ repository: repo, gracePeriodMs: this.flags['grace-period'] * 60_000, signal: interruptSignal() });
      this.out(
        render(this.flags.output, result, (r) =>
          `${r.snapshots} snapshots; packs: ${r.packsBefore} before, ${r.packsDeleted} deleted, ${r.packsRepacked} repacked into ${r.packsWritten}, ` +
          `${r.unindexedPacksDeleted} unindexed removed; ${r.blobsRemoved} blobs removed, ${formatBytes(r.bytesFreed)} freed; ` +
          `index files ${r.indexFilesBefore} → ${r.indexFilesAfter}; ${r.staleLocksRemoved} stale locks removed`,
        ),
      );
    } catch (err) {
      throw toCliError(err);
    }
  }
}
