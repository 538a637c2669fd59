// The bench:datamover report: per step (first backup, incremental backup, restore) the data mover through the
// cluster next to the data path alone on the same data (cairn's, and kopia's, the uploader Velero's data mover runs
// on) and the ratios; then the DataUpload/DataDownload phase breakdown. Tables in bench/datapath's shape. Pure, so
// it is unit-testable.
import { formatNumber, renderTable } from '../datapath/report.js';

export type DatamoverStepName = 'first backup' | 'incremental backup' | 'restore';

export interface DatamoverStep {
  step: DatamoverStepName;
  /** Bytes in the volume at that step (what a user protects or gets back). */
  bytes: number;
  files: number;
  /** `cairn repo backup|restore` wall time on the same data (the figure bench:fsb compares with). */
  dataPathSeconds: number;
  /** `kopia snapshot create|restore` wall time on the same data; absent when kopia is not built. */
  kopiaSeconds?: number | undefined;
  /** DataUpload/DataDownload first seen → first seen Completed. */
  dataMoverSeconds: number;
  phases: { name: string; seconds: number | undefined }[];
  /** `backup create --wait` / `restore create --wait` wall time. */
  commandSeconds: number;
  verified: boolean;
}

const MB = 1e6;

/** How a reference's time compares with the data mover's: > 1 means the data mover is faster. */
export function ratio(referenceSeconds: number | undefined, dataMoverSeconds: number): number | undefined {
  return referenceSeconds !== undefined && dataMoverSeconds > 0 ? referenceSeconds / dataMoverSeconds : undefined;
}

const mbps = (bytes: number, seconds: number | undefined) => (seconds ? bytes / MB / seconds : undefined);
const times = (r: number | undefined) => (r === undefined ? '-' : `${formatNumber(r, 2)}x`);

export function renderDatamoverReport(steps: readonly DatamoverStep[], kopiaNote = ''): string {
  const header = ['step', 'data mover s', 'data path s', 'kopia s', 'data mover MB/s', 'data path MB/s', 'kopia MB/s', 'vs data path', 'vs kopia', 'whole command s', 'verified'];
  const rows = steps.map((s) => [
    s.step,
    formatNumber(s.dataMoverSeconds, 2),
    formatNumber(s.dataPathSeconds, 2),
    formatNumber(s.kopiaSeconds, 2),
    formatNumber(mbps(s.bytes, s.dataMoverSeconds), 1),
    formatNumber(mbps(s.bytes, s.dataPathSeconds), 1),
    formatNumber(mbps(s.bytes, s.kopiaSeconds), 1),
    times(ratio(s.dataPathSeconds, s.dataMoverSeconds)),
    times(ratio(s.kopiaSeconds, s.dataMoverSeconds)),
    formatNumber(s.commandSeconds, 2),
    s.verified ? 'yes' : 'NO',
  ]);
  const phaseHeader = ['step', ...(steps[0]?.phases.map((p) => p.name) ?? [])];
  const phaseRows = steps.map((s) => [s.step, ...s.phases.map((p) => formatNumber(p.seconds, 2))]);
  const lines = steps.map((s) => {
    const ours = `${s.step}: data mover ${formatNumber(mbps(s.bytes, s.dataMoverSeconds), 1)} MB/s`;
    const dataPath = `data path alone ${formatNumber(mbps(s.bytes, s.dataPathSeconds), 1)} MB/s (${times(ratio(s.dataPathSeconds, s.dataMoverSeconds))})`;
    const kopia = s.kopiaSeconds === undefined ? '' : `, kopia alone ${formatNumber(mbps(s.bytes, s.kopiaSeconds), 1)} MB/s (${times(ratio(s.kopiaSeconds, s.dataMoverSeconds))})`;
    return `${ours}; ${dataPath}${kopia}`;
  });
  return [
    renderTable(header, rows),
    ...(kopiaNote ? [kopiaNote] : []),
    '',
    'phases of the DataUpload / DataDownload (seconds between first sightings):',
    renderTable(phaseHeader, phaseRows),
    '',
    ...lines,
    '',
  ].join('\n');
}
