// The bench:datamover report: per step (first backup, incremental backup, restore) the data mover through the
// cluster next to the data path alone on the same data, and their ratio; then the DataUpload/DataDownload phase
// breakdown. Tables in bench/datapath's shape. Pure, so it is unit-testable.
import { formatNumber, renderTable } from '../datapath/report.js';

export type DatamoverStepName = 'first backup' | 'incremental backup' | 'restore';

export interface DatamoverStep {
  step: DatamoverStepName;
  /** Bytes in the volume at that step (what a user protects or gets back). */
  bytes: number;
  files: number;
  /** `cairn repo backup|restore` wall time on the same data (the peer figure, as in bench:fsb). */
  dataPathSeconds: number;
  /** DataUpload/DataDownload first seen → first seen Completed. */
  dataMoverSeconds: number;
  phases: { name: string; seconds: number | undefined }[];
  /** `backup create --wait` / `restore create --wait` wall time. */
  commandSeconds: number;
  verified: boolean;
}

const MB = 1e6;

/** Data mover throughput over the data path's: 1 means the round trip through the cluster costs nothing. */
export function ratio(s: Pick<DatamoverStep, 'dataPathSeconds' | 'dataMoverSeconds'>): number | undefined {
  return s.dataMoverSeconds > 0 ? s.dataPathSeconds / s.dataMoverSeconds : undefined;
}

export function renderDatamoverReport(steps: readonly DatamoverStep[]): string {
  const header = ['step', 'data mover s', 'data path s', 'overhead s', 'data mover MB/s', 'data path MB/s', 'ratio', 'whole command s', 'verified'];
  const rows = steps.map((s) => [
    s.step,
    formatNumber(s.dataMoverSeconds, 2),
    formatNumber(s.dataPathSeconds, 2),
    formatNumber(s.dataMoverSeconds - s.dataPathSeconds, 2),
    formatNumber(s.bytes / MB / s.dataMoverSeconds, 1),
    formatNumber(s.bytes / MB / s.dataPathSeconds, 1),
    `${formatNumber(ratio(s), 2)}x`,
    formatNumber(s.commandSeconds, 2),
    s.verified ? 'yes' : 'NO',
  ]);
  const phaseHeader = ['step', ...(steps[0]?.phases.map((p) => p.name) ?? [])];
  const phaseRows = steps.map((s) => [s.step, ...s.phases.map((p) => formatNumber(p.seconds, 2))]);
  const lines = steps.map(
    (s) =>
      `${s.step}: data mover ${formatNumber(s.bytes / MB / s.dataMoverSeconds, 1)} MB/s, data path alone ${formatNumber(s.bytes / MB / s.dataPathSeconds, 1)} MB/s = ${formatNumber(ratio(s), 2)}x`,
  );
  return [renderTable(header, rows), '', 'phases of the DataUpload / DataDownload (seconds between first sightings):', renderTable(phaseHeader, phaseRows), '', ...lines, ''].join('\n');
}
