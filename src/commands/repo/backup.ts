import { statSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { render } from '../../cli/output.js';
import { UsageError } from '../../base/errors.js';
import { createProgress } from '../../cli/progress.js';
import { formatBytes } from '../../base/bytes.js';
import { interruptSignal, openRepository, repoFlags, toCliError } from '../../datapath/cli-support.js';
import type { ScanAhead } from '../../datapath/scan-ahead.js';
import { backup, bootBackupWorkers, startSourceScan, type BackupProgress } from '../../datapath/uploader.js';
import { defaultCacheDir } from '../../datapath/listing-cache.js';

export default class RepoBackup extends BaseCommand<typeof RepoBackup> {
  static override summary = 'Back up a directory into a repository; prints the snapshot ID.';
  static override description =
    'By default the parent is the latest snapshot of the same source path, so a re-run only reads files whose size, mtime, ctime or inode changed. ' +
    'An interrupted backup leaves no snapshot; running it again reuses what was already uploaded.';
  static override args = { dir: Args.string({ description: 'Directory to back up.', required: true }) };
  static override flags = {
    ...repoFlags,
    ...outputFlag,
    parent: Flags.string({ description: 'Parent snapshot to compare with: an ID, "latest", or "none" for a full read.' }),
    tag: Flags.string({ description: 'Tag as key=value (repeatable).', multiple: true }),
    description: Flags.string({ description: 'Free-text description stored with the snapshot.' }),
    exclude: Flags.string({ description: 'Glob of paths to leave out (repeatable); without "/" it matches names at any depth.', multiple: true }),
    'fail-on-unreadable': Flags.boolean({ description: 'Fail instead of reporting and skipping files that vanish or cannot be read.' }),
    'upload-bytes-per-second': Flags.integer({ description: 'Write at most this many bytes per second to the repository.', min: 1 }),
    'cache-dir': Flags.string({ description: 'Local cache directory, holding what the last backup of DIR stored per directory and the key file that opened the repository (default: $XDG_CACHE_HOME/cairn or ~/.cache/cairn).' }),
    cache: Flags.boolean({
      description: 'Use the local cache: an unchanged directory is taken as stored last time without reading its listing, and the key is derived while the repository is opened (--no-cache: compare with the parent snapshot\'s listings only; neither read nor write the cache).',
      default: true,
      allowNo: true,
    }),
  };

  async run(): Promise<void> {
    const tags: Record<string, string> = {};
    for (const t of this.flags.tag ?? []) {
      const at = t.indexOf('=');
      if (at <= 0) throw new UsageError('--tag', `expected key=value, got ${JSON.stringify(t)}`);
      tags[t.slice(0, at)] = t.slice(at + 1);
    }
    const progress = process.stderr.isTTY ? createProgress({ label: 'backup' }) : undefined;
    const logProgress = this.flags['log-level'] === 'info' || this.flags['log-level'] === 'debug' || this.flags['log-level'] === 'trace';
    const onProgress = (p: BackupProgress) => {
      progress?.update(p.doneBytes, p.totalBytes, `${formatBytes(p.doneBytes)} / ${formatBytes(p.totalBytes)}, ${p.doneFiles}/${p.totalFiles} files`);
      if (logProgress && !progress) this.log_.info({ doneBytes: p.doneBytes, totalBytes: p.totalBytes, doneFiles: p.doneFiles, totalFiles: p.totalFiles }, 'progress');
    };
    let isDir: boolean;
    try {
      isDir = statSync(this.args.dir).isDirectory();
    } catch (err) {
      throw new UsageError('DIR', `cannot read ${this.args.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!isDir) throw new UsageError('DIR', `${this.args.dir} is not a directory`);
    let scan: ScanAhead | undefined;
    try {
      bootBackupWorkers();
      scan = startSourceScan(this.args.dir, this.flags.exclude ?? []);
      const repo = await openRepository(this.flags, {
        prefetchIndex: true,
        uploadBytesPerSecond: this.flags['upload-bytes-per-second'],
        cacheDir: this.flags.cache ? (this.flags['cache-dir'] ?? defaultCacheDir()) : false,
      });
      const parent = this.flags.parent === 'none' ? null : this.flags.parent;
      const result = await backup({
        source: this.args.dir,
        repository: repo,
        ...(parent !== undefined ? { parent } : {}),
        tags,
        ...(this.flags.description ? { description: this.flags.description } : {}),
        excludes: this.flags.exclude ?? [],
        failOnUnreadable: this.flags['fail-on-unreadable'],
        ...(this.flags.cache ? { cacheDir: this.flags['cache-dir'] ?? defaultCacheDir() } : {}),
        signal: interruptSignal(),
        scan,
        ...(progress || logProgress ? { onProgress } : {}),
      });
      progress?.stop('done');
      for (const s of result.skipped) this.log_.warn({ path: s.path }, s.reason);
      for (const e of result.errors) this.log_.warn({ path: e.path }, `not backed up: ${e.reason}`);
      const s = result.stats;
      const summary = {
        snapshotId: result.snapshotId,
        parent: result.parent ?? null,
        files: s.files,
        dirs: s.dirs,
        bytes: s.bytes,
        newBytes: s.newBytes,
        reusedBytes: s.reusedBytes,
        newFiles: s.newFiles,
        unchangedFiles: s.unchangedFiles,
        storedBytes: s.storedBytes,
        durationMs: s.durationMs,
        errors: result.errors,
        skipped: result.skipped,
      };
      this.out(render(this.flags.output, summary, (r) => r.snapshotId));
      if (result.errors.length > 0) process.stderr.write(`warning: ${result.errors.length} file(s) could not be read and are not in the snapshot (see -o json or --log-level warn)\n`);
    } catch (err) {
      scan?.stop();
      progress?.stop('failed');
      throw toCliError(err);
    }
  }
}
