/**
 * The data-mover part of `restore describe`: the restore's DataDownloads grouped by phase (Velero's phase-group
 * layout, one `<namespace>/<claim>` per download) and, with --details, one block per claim with its DataDownload,
 * phase, node, snapshot and, while the data mover runs, its live progress. Read from the DataDownloads in the
 * cluster, so the progress is what the node agent last reported.
 */
import type { DataDownload } from '../../api/index.js';
import { NONE, phaseGroup, type Describer } from './describer.js';
import { describeTransferFields, transferView, type TransferView } from './pod-volumes.js';

/** Velero's order of data-path phase groups on the restore side. */
export const DD_PHASE_ORDER = ['Completed', 'Canceled', 'Failed', 'In Progress', 'Canceling', 'Prepared', 'Accepted', 'New'] as const;

/** One DataDownload as describe shows it. */
export interface DataDownloadView extends TransferView {
  name: string;
  /** The claim restored into (restore-time namespace). */
  namespace: string;
  pvc: string;
  node?: string | undefined;
  snapshotID: string;
}

export function dataDownloadViews(dds: readonly DataDownload[]): DataDownloadView[] {
  const views = dds.map((dd) => ({
    name: dd.metadata?.name ?? '',
    namespace: dd.spec.targetVolume.namespace,
    pvc: dd.spec.targetVolume.pvc,
    ...transferView(dd.status),
    node: dd.status?.node || undefined,
    snapshotID: dd.spec.snapshotID,
  }));
  const key = (v: DataDownloadView) => `${v.namespace}/${v.pvc}/${v.name}`;
  return views.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The section; nothing when the restore has no DataDownloads. */
export function describeDataDownloads(d: Describer, dds: readonly DataDownload[], details: boolean): void {
  if (!dds.length) return;
  const views = dataDownloadViews(dds);
  d.line(details ? 'Data Movement Restores:' : 'Data Movement Restores (specify --details for more information):');
  for (const group of DD_PHASE_ORDER) {
    const members = views.filter((v) => phaseGroup(v.phase) === group);
    if (!members.length) continue;
    if (!details) {
      d.line(`\t${group}:\t${members.length}`);
      continue;
    }
    d.line(`\t${group}:`);
    for (const v of members) d.line(`\t\t${v.namespace}/${v.pvc}`);
  }
  if (!details) return;
  d.line();
  d.line('Data Download Details:');
  for (const v of views) {
    d.line(`\t${v.namespace}/${v.pvc}:`);
    const field = (name: string, value: string) => d.line(`\t\t${name}:\t${value}`);
    field('Data Download', v.name);
    field('Phase', phaseGroup(v.phase));
    field('Node', v.node ?? NONE);
    field('Snapshot ID', v.snapshotID || NONE);
    describeTransferFields(field, v);
  }
}
