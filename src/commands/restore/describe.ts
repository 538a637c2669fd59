import { Args, Flags } from '@oclif/core';
import { selectObjects } from '../../cli/select.js';
import { BaseCommand, outputFlag } from '../../cli/base-command.js';
import { asList, formatJson, formatYaml } from '../../cli/output.js';
import { parseDuration } from '../../cli/duration.js';
import { parseLabelSelector } from '../../cli/label-selector.js';
import { colours } from '../../cli/colour.js';
import { fetchJson, parsedOperations, withTransientRetry, type Fetched } from '../../cli/backups.js';
import { dataDownloadClient, podVolumeRestoreClient, restoreClient, type RestoreDescription } from '../../cli/restores.js';
import { describeRestore, restoreDescription } from '../../cli/describe/restore.js';
import { Labels, labelValue, parseRestoreOperations, selectorFor, type Restore } from '../../api/index.js';
import { connect, type Kube } from '../../kube/client.js';
import type { Results } from '../../api/results.js';
import type { RestoreVolumeInfo } from '../../api/volume-info.js';

const NOT_STORED = { ok: false, notFound: true, error: 'not stored yet' } as const;

export default class RestoreDescribe extends BaseCommand<typeof RestoreDescribe> {
  static override summary = 'Describe restores in detail.';
  static override description = 'Prints the sections Velero prints, in the same order. Files kept in storage are read through the cluster.';
  static override args = { names: Args.string({ description: 'Names of restores to describe (default: all, or those matching --selector).' }) };
  static override strict = false;
  static override flags = {
    ...outputFlag,
    selector: Flags.string({ char: 'l', description: 'Only restores whose labels match this selector.' }),
    details: Flags.boolean({ description: 'Add the list of restored resources and per-volume information (pod volume restores and data downloads with live progress).', default: false }),
    'no-color': Flags.boolean({ description: 'Never colour the output (also: NO_COLOR).', default: false }),
    timeout: Flags.string({ description: 'How long to wait for each file read through the cluster (Go duration).', default: '1m' }),
  };

  async run(): Promise<void> {
    if (this.flags.selector) parseLabelSelector('--selector', this.flags.selector);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const ns = this.flags.namespace;
    const client = restoreClient(kube);
    const names = this.positional;
    const restores = await selectObjects(client, { namespace: ns, names, selector: this.flags.selector, what: 'restore' });

    const c = colours(this.colourEnabled(this.flags['no-color']));
    const texts: string[] = [];
    const descriptions: RestoreDescription[] = [];
    for (const restore of restores) {
      const g = await this.gather(kube, restore, timeoutMs);
      if (this.flags.output === 'table') texts.push(describeRestore({ restore, details: this.flags.details, colours: c, ...g }));
      else
        descriptions.push(restoreDescription({ restore, details: this.flags.details, ...g }));
    }
    if (this.flags.output === 'table') {
      this.out(restores.length ? texts.join('\n\n') : 'No restores found');
      return;
    }
    const value = names.length === 1 ? descriptions[0] : asList(descriptions);
    this.out(this.flags.output === 'json' ? formatJson(value) : formatYaml(value));
  }

  private async gather(kube: Kube, restore: Restore, timeoutMs: number) {
    const ns = this.flags.namespace;
    const name = restore.metadata.name ?? '';
    const byName = selectorFor({ [Labels.RestoreName]: labelValue(name) });
    const podVolumeRestores = await withTransientRetry(() => podVolumeRestoreClient(kube).list(ns, byName));
    const dataDownloads = await withTransientRetry(() => dataDownloadClient(kube).list(ns, byName));
    const phase = restore.status?.phase ?? 'New';
    const stored = !['New', 'FailedValidation', 'InProgress'].includes(phase);
    const read = <T>(kind: 'RestoreResults' | 'RestoreVolumeInfo' | 'RestoreResourceList' | 'RestoreItemOperations'): Promise<Fetched<T>> =>
      stored ? fetchJson<T>(kube, { namespace: ns, kind, name, timeoutMs, logger: this.log_ }) : Promise.resolve(NOT_STORED);
    const hasResults = (restore.status?.warnings ?? 0) > 0 || (restore.status?.errors ?? 0) > 0;
    const wantsOperations = this.flags.details && (restore.status?.restoreItemOperationsAttempted ?? 0) > 0;
    const [results, volumeInfo, resourceList, itemOperations] = await Promise.all([
      hasResults ? read<Results>('RestoreResults') : Promise.resolve(undefined),
      read<RestoreVolumeInfo[]>('RestoreVolumeInfo'),
      this.flags.details ? read<Record<string, string[]>>('RestoreResourceList') : Promise.resolve(undefined),
      wantsOperations ? read<unknown>('RestoreItemOperations').then((f) => parsedOperations(f, parseRestoreOperations)) : Promise.resolve(undefined),
    ]);
    return { podVolumeRestores, dataDownloads, results, volumeInfo, resourceList, itemOperations };
  }
}
