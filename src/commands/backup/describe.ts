import { Args, Flags } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatJson, formatYaml } from '../../cli/output.js';
import { parseDuration } from '../../cli/duration.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { colours } from '../../cli/colour.js';
import {
  backupClient,
  dataUploadClient,
  deleteRequestClient,
  fetchJson,
  parsedOperations,
  podVolumeBackupClient,
  withTransientRetry,
  type BackupDescription,
  type Fetched,
} from '../../cli/backups.js';
import { backupDescription, describeBackup } from '../../cli/describe/backup.js';
import { Labels, creationTimestampOf, labelValue, parseBackupOperations, selectorFor, type Backup } from '../../api/index.js';
import { connect, type Kube } from '../../kube/client.js';
import type { Results } from '../../api/results.js';
import type { BackupVolumeInfo } from '../../api/volume-info.js';

const NOT_STORED = { ok: false, notFound: true, error: 'not stored yet' } as const;

export default class BackupDescribe extends BaseCommand<typeof BackupDescribe> {
  static override summary = 'Describe backups in detail.';
  static override description =
    'Prints the sections Velero prints, in the same order. Files kept in storage (results, volume info, resource list) are read through the cluster.';
  static override examples = ['<%= config.bin %> backup describe nightly', '<%= config.bin %> backup describe nightly --details', '<%= config.bin %> backup describe nightly -o json'];
  static override args = { names: Args.string({ description: 'Names of backups to describe (default: all, or those matching --selector).' }) };
  static override strict = false;
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only backups whose labels match this selector.' }),
    details: Flags.boolean({ description: 'Add the resource list and per-volume information (method, snapshot ID, size, live progress of pod volume backups and data uploads).', default: false }),
    'no-color': Flags.boolean({ description: 'Never colour the output (also: NO_COLOR).', default: false }),
    timeout: Flags.string({ description: 'How long to wait for each file read through the cluster (Go duration).', default: '1m' }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = backupClient(kube);
    const names = this.positional;
    const backups = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'backup' });

    const descriptions: BackupDescription[] = [];
    const texts: string[] = [];
    const c = colours(this.colourEnabled(this.flags['no-color']));
    for (const backup of backups) {
      const gathered = await this.gather(kube, backup, timeoutMs);
      if (this.flags.output === 'table') {
        texts.push(describeBackup({ backup, details: this.flags.details, colours: c, ...gathered }));
      } else {
        descriptions.push(backupDescription({ backup, details: this.flags.details, ...gathered }));
      }
    }
    if (this.flags.output === 'table') {
      if (!backups.length) this.out('No backups found');
      else this.out(texts.join('\n\n'));
      return;
    }
    const value = names.length === 1 ? descriptions[0] : asList(descriptions);
    this.out(this.flags.output === 'json' ? formatJson(value) : formatYaml(value));
  }

  private async gather(kube: Kube, backup: Backup, timeoutMs: number) {
    const ns = this.flags.namespace;
    const name = backup.metadata.name ?? '';
    const selector = selectorFor({ [Labels.BackupName]: labelValue(name) });
    const uid = backup.metadata.uid ?? '';
    const [deleteRequests, podVolumeBackups, dataUploads] = await Promise.all([
      withTransientRetry(() => deleteRequestClient(kube).list(ns, selector)),
      withTransientRetry(() => podVolumeBackupClient(kube).list(ns, selector)),
      uid ? withTransientRetry(() => dataUploadClient(kube).list(ns, selectorFor({ [Labels.BackupUID]: uid }))) : Promise.resolve([]),
    ]);
    // Files exist only once the backup was persisted; before that nothing is asked of the server.
    const phase = backup.status?.phase ?? 'New';
    // A canceled backup's files are deleted: nothing to download.
    const stored = !['New', 'FailedValidation', 'InProgress', 'Canceling', 'Canceled'].includes(phase);
    const read = <T>(kind: 'BackupResults' | 'BackupVolumeInfos' | 'BackupResourceList' | 'BackupItemOperations'): Promise<Fetched<T>> =>
      stored ? fetchJson<T>(kube, { namespace: ns, kind, name, timeoutMs, logger: this.log_ }) : Promise.resolve(NOT_STORED);
    const hasResults = (backup.status?.warnings ?? 0) > 0 || (backup.status?.errors ?? 0) > 0;
    const wantsVolumes = backup.spec.snapshotVolumes !== false && (this.flags.output === 'table' || this.flags.details);
    const wantsOperations = this.flags.details && (backup.status?.backupItemOperationsAttempted ?? 0) > 0;
    const [results, volumeInfo, resourceList, itemOperations] = await Promise.all([
      hasResults ? read<Results>('BackupResults') : Promise.resolve(undefined),
      wantsVolumes ? read<BackupVolumeInfo[]>('BackupVolumeInfos') : Promise.resolve(undefined),
      this.flags.details ? read<Record<string, string[]>>('BackupResourceList') : Promise.resolve(undefined),
      wantsOperations ? read<unknown>('BackupItemOperations').then((f) => parsedOperations(f, parseBackupOperations)) : Promise.resolve(undefined),
    ]);
    return { deleteRequests: byCreation(deleteRequests), podVolumeBackups, dataUploads: byName(dataUploads), results, volumeInfo, resourceList, itemOperations };
  }
}

function byName<T extends { metadata: { name?: string | undefined } }>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/** Oldest first, as the deletion attempts happened. */
function byCreation<T extends { metadata: object }>(items: T[]): T[] {
  return [...items].sort((a, b) => (creationTimestampOf(a)?.getTime() ?? 0) - (creationTimestampOf(b)?.getTime() ?? 0));
}
