// The bench:fsb report: one table in the shape of bench/datapath's (left-aligned first column, right-aligned
// numbers), the phase breakdown of the cluster runs, and the overhead target as a PASS/FAIL line.
import { formatNumber, renderTable } from '../datapath/report.js';

export interface FsbStep {
  /** `unchanged backup`: nothing changed since the first, listing caches kept; `unchanged, no cache`: without them. */
  step: 'backup' | 'unchanged backup' | 'unchanged, no cache' | 'restore';
  bytes: number;
  files: number;
  /** `cairn repo backup|restore` wall time on the same data. */
  dataPathSeconds: number;
  /** PVB/PVR created → Completed, as seen from outside. */
  clusterSeconds: number;
  /** Phase intervals of the cluster run, in order. */
  phases: { name: string; seconds: number | undefined }[];
  /** `backup create --wait` / `restore create --wait` wall time (the whole backup/restore, not only the volume). */
  commandSeconds: number;
  verified: boolean;
}

export const OVERHEAD_TARGET_SECONDS = 3;

export function renderFsbReport(steps: readonly FsbStep[]): string {
  const MB = 1e6;
  const header = ['step', 'data path s', 'cluster s', 'overhead s', 'data path MB/s', 'cluster MB/s', 'whole command s', 'verified'];
  const rows = steps.map((s) => [
    s.step,
    formatNumber(s.dataPathSeconds, 2),
    formatNumber(s.clusterSeconds, 2),
    formatNumber(s.clusterSeconds - s.dataPathSeconds, 2),
    formatNumber(s.bytes / MB / s.dataPathSeconds, 1),
    formatNumber(s.bytes / MB / s.clusterSeconds, 1),
    formatNumber(s.commandSeconds, 2),
    s.verified ? 'yes' : 'NO',
  ]);
  const phaseHeader = ['step', ...(steps[0]?.phases.map((p) => p.name) ?? [])];
  const phaseRows = steps.map((s) => [s.step, ...s.phases.map((p) => formatNumber(p.seconds, 2))]);
  const checks = steps.map((s) => {
    const overhead = s.clusterSeconds - s.dataPathSeconds;
    const ok = overhead < OVERHEAD_TARGET_SECONDS;
    return `${ok ? 'PASS' : 'FAIL'}  ${s.step}: micro-service overhead ${formatNumber(overhead, 2)} s per volume (target < ${OVERHEAD_TARGET_SECONDS} s)`;
  });
  return [renderTable(header, rows), '', 'cluster phases (seconds between first sightings):', renderTable(phaseHeader, phaseRows), '', ...checks, ''].join('\n');
}
