/**
 * `backup logs` / `restore logs`: the log of a finished operation, read through the cluster (a DownloadRequest),
 * so it works even when the storage endpoint cannot be reached from where the CLI runs.
 */
import { Args, Flags } from '@oclif/core';
import { isBackupDone, isRestoreDone } from '../api/index.js';
import type { Logger } from '../base/logger.js';
import { CairnError, NotFoundError } from '../base/errors.js';
import { backupClient } from './backups.js';
import { restoreClient } from './restores.js';
import { connect, type Kube } from '../kube/client.js';
import { BaseCommand } from './base-command.js';
import { parseDuration } from './duration.js';
import { fetchDownload } from '../server/download/client.js';

export interface FetchLogOptions {
  kind: 'backup' | 'restore';
  namespace: string;
  name: string;
  timeoutMs: number;
  logger?: Logger;
}

export async function fetchOperationLog(kube: Kube, opts: FetchLogOptions): Promise<Buffer> {
  const { kind, namespace, name } = opts;
  const obj = kind === 'backup' ? await backupClient(kube).get(namespace, name) : await restoreClient(kube).get(namespace, name);
  if (!obj) throw new NotFoundError(`${kind} "${name}" not found in namespace "${namespace}"`);
  const phase = obj.status?.phase;
  const done = kind === 'backup' ? isBackupDone(phase) : isRestoreDone(phase);
  // A canceled backup's files, its log among them, are deleted with it (a canceled restore keeps its log).
  if (kind === 'backup' && phase === 'Canceled') throw new NotFoundError(`backup "${name}" was canceled: its log was deleted with its files`);
  if (!done) {
    throw new CairnError(`logs for ${kind} "${name}" are not available until it has finished (phase ${phase ?? 'New'}); try again once it is Completed or Failed`);
  }
  try {
    return await fetchDownload(kube, {
      namespace,
      kind: kind === 'backup' ? 'BackupLog' : 'RestoreLog',
      name,
      timeoutMs: opts.timeoutMs,
      gunzip: true,
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
  } catch (err) {
    if (err instanceof NotFoundError) throw new NotFoundError(`no log stored for ${kind} "${name}"`);
    throw err;
  }
}

/** The command behind `backup logs` and `restore logs`: each names its texts and its kind. */
export abstract class OperationLogsCommand extends BaseCommand<typeof OperationLogsCommand> {
  static override description = 'The log is read through the cluster (a DownloadRequest), so it works even when the storage endpoint cannot be reached from here.';
  static override args = { name: Args.string({ required: true, description: 'Name of the object.' }) };
  static override flags = {
    timeout: Flags.string({ description: 'How long to wait for the log (Go duration).', default: '1m' }),
  };
  protected abstract readonly kind: FetchLogOptions['kind'];

  async run(): Promise<void> {
    const { name } = this.args;
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const log = await fetchOperationLog(kube, { kind: this.kind, namespace: this.flags.namespace, name, timeoutMs, logger: this.log_ });
    process.stdout.write(log);
  }
}
