// Turns results into what a reader sees: one table per dataset x store, cairn's ratios to each peer, and the
// performance targets (docs/benchmarks.md) as PASS/FAIL lines. Pure functions of the results, so they are unit-tested.
import type { DatasetInfo, ScenarioResult } from './results.js';
import { PEER_NAMES, type StoreName, type ToolName } from './tools/types.js';

const MB = 1e6;

export function formatNumber(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Left-aligned first column, right-aligned numbers, two spaces between columns. */
export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const HEADER = [
  'tool',
  '1st MB/s',
  'files/s',
  'CPU s',
  'others CPU s',
  'peak RSS MB',
  'repo MB',
  'unchanged s',
  'changed s',
  'restore MB/s',
  'restore files/s',
  'verified',
];

function row(result: ScenarioResult): string[] {
  const first = result.first;
  if (!first) return [`${result.tool} (${result.status})`, ...HEADER.slice(1).map(() => '-')];
  // Client CPU, plus MinIO's after a "+" on the S3 rows (both come out of the same 2 cores).
  const server = first.serverCpuSeconds === undefined ? '' : `+${formatNumber(first.serverCpuSeconds, 1)}`;
  return [
    result.status === 'ok' ? result.tool : `${result.tool} (${result.status})`,
    formatNumber(first.mbPerSecond, 1),
    formatNumber(first.filesPerSecond),
    `${formatNumber(first.cpuSeconds, 1)}${server}`,
    formatNumber(first.othersCpuSeconds, 1),
    formatNumber(first.peakRssBytes / MB),
    formatNumber(result.repositoryBytesAfterFirst === undefined ? undefined : result.repositoryBytesAfterFirst / MB, 1),
    formatNumber(result.unchanged?.wallSeconds, 2),
    formatNumber(result.changed?.wallSeconds, 2),
    formatNumber(result.restore?.mbPerSecond, 1),
    formatNumber(result.restore?.filesPerSecond),
    result.restore ? (result.restore.verified ? 'yes' : 'NO') : '-',
  ];
}

function find(results: ScenarioResult[], tool: ToolName, store: StoreName, dataset: string): ScenarioResult | undefined {
  return results.find((r) => r.tool === tool && r.store === store && r.dataset === dataset && r.status === 'ok');
}

const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b;
const x = (value: number | undefined): string => (value === undefined ? '-' : `${value.toFixed(2)}x`);

/** "cairn/restic: 1st 2.10x MB/s, files/s ..., unchanged 0.45x time, ..." for each peer with results. */
export function ratioLines(results: ScenarioResult[], store: StoreName, dataset: string): string[] {
  const cairn = find(results, 'cairn', store, dataset);
  if (!cairn) return [];
  const lines: string[] = [];
  for (const peer of PEER_NAMES) {
    const other = find(results, peer, store, dataset);
    if (!other) continue;
    lines.push(
      `cairn/${peer}: 1st backup ${x(ratio(cairn.first?.mbPerSecond, other.first?.mbPerSecond))} MB/s, ` +
        `${x(ratio(cairn.first?.filesPerSecond, other.first?.filesPerSecond))} files/s, ` +
        `${x(ratio(cairn.first?.cpuSeconds, other.first?.cpuSeconds))} CPU, ` +
        `peak RSS ${x(ratio(cairn.first?.peakRssBytes, other.first?.peakRssBytes))}, ` +
        `repo size ${x(ratio(cairn.repositoryBytesAfterFirst, other.repositoryBytesAfterFirst))}, ` +
        `unchanged ${x(ratio(cairn.unchanged?.wallSeconds, other.unchanged?.wallSeconds))} time ` +
        `(${x(ratio(cairn.unchanged?.cpuSeconds, other.unchanged?.cpuSeconds))} CPU), ` +
        `changed ${x(ratio(cairn.changed?.wallSeconds, other.changed?.wallSeconds))} time ` +
        `(${x(ratio(cairn.changed?.cpuSeconds, other.changed?.cpuSeconds))} CPU), ` +
        `restore ${x(ratio(cairn.restore?.mbPerSecond, other.restore?.mbPerSecond))} MB/s`,
    );
  }
  return lines;
}

function memoryLines(results: ScenarioResult[], store: StoreName, dataset: string): string[] {
  const lines: string[] = [];
  for (const result of results) {
    if (result.store !== store || result.dataset !== dataset || !result.first) continue;
    const points = result.first.rssCheckpoints;
    if (points.length === 0) continue;
    const text = points
      .map((p) => `${formatNumber(p.rssBytes / MB)} MB at ${formatNumber(p.filesProcessed)} files`)
      .join(', ');
    const source = points[0]?.source === 'time' ? ' (file counts estimated from elapsed time)' : '';
    lines.push(`${result.tool} RSS: ${text}${source}`);
  }
  return lines;
}

/** Warns where other work on the machine took a large share of the CPU while a tool was being measured. */
export function contentionLines(rows: ScenarioResult[], cores: number, threshold = CONTENTION_WARNING): string[] {
  const lines: string[] = [];
  for (const r of rows) {
    const steps = [
      ['1st backup', r.first],
      ['unchanged', r.unchanged],
      ['changed', r.changed],
      ['restore', r.restore],
    ] as const;
    const busy = steps
      .filter(([, f]) => f !== undefined && f.wallSeconds > 0)
      .map(([name, f]) => [name, f!.othersCpuSeconds / (f!.wallSeconds * cores)] as const)
      .filter(([, share]) => share > threshold);
    if (busy.length > 0) {
      const shares = busy.map(([, share]) => `${Math.round(share * 100)}%`).join('/');
      const names = busy.map(([name]) => name).join('/');
      lines.push(`warning: ${r.tool}: other processes took ${shares} of the CPU during ${names}: its figures are pessimistic`);
    }
  }
  return lines;
}

/** Share of all cores that other processes may take during a step before the report warns about it. */
export const CONTENTION_WARNING = 0.15;

export function renderReport(datasets: DatasetInfo[], results: ScenarioResult[], cores = 2): string {
  const blocks: string[] = [];
  for (const dataset of datasets) {
    for (const store of ['fs', 's3'] as const) {
      const rows = results.filter((r) => r.dataset === dataset.name && r.store === store);
      if (rows.length === 0) continue;
      const title =
        `${dataset.title}: ${formatNumber(dataset.bytes / MB, 1)} MB in ${formatNumber(dataset.files)} files; ` +
        `store ${store === 'fs' ? 'local filesystem' : 'MinIO on loopback'}`;
      const problems = rows
        .filter((r) => r.status !== 'ok')
        .map((r) => `${r.tool}: ${r.status === 'failed' ? 'FAILED: ' : ''}${r.reason ?? r.status}`);
      blocks.push(
        [
          title,
          renderTable(HEADER, rows.map(row)),
          ...problems,
          ...contentionLines(rows, cores),
          ...memoryLines(results, store, dataset.name),
          ...ratioLines(results, store, dataset.name),
        ].join('\n'),
      );
    }
  }
  return blocks.join('\n\n');
}

export interface TargetCheck {
  verdict: 'PASS' | 'FAIL' | 'N/A';
  text: string;
}

interface RatioTarget {
  dataset: string;
  store: StoreName;
  peer: ToolName;
  what: string;
  /** The figure compared; ratio = cairn / peer. */
  pick: (r: ScenarioResult) => number | undefined;
  unit: string;
  /** PASS when ratio >= min (or <= max). */
  min?: number;
  max?: number;
}

const RATIO_TARGETS: RatioTarget[] = [
  { dataset: 'mixed', store: 'fs', peer: 'restic', what: 'first backup MB/s >= 2.0x restic', pick: (r) => r.first?.mbPerSecond, unit: 'MB/s', min: 2.0 },
  { dataset: 'mixed', store: 'fs', peer: 'kopia', what: 'first backup MB/s >= 1.2x kopia', pick: (r) => r.first?.mbPerSecond, unit: 'MB/s', min: 1.2 },
  { dataset: 'mixed', store: 'fs', peer: 'restic', what: 'unchanged re-run time <= 0.5x restic', pick: (r) => r.unchanged?.wallSeconds, unit: 's', max: 0.5 },
  { dataset: 'mixed', store: 'fs', peer: 'restic', what: '5%-changed run time <= 0.5x restic', pick: (r) => r.changed?.wallSeconds, unit: 's', max: 0.5 },
  { dataset: 'mixed', store: 'fs', peer: 'restic', what: 'restore MB/s >= 1.5x restic', pick: (r) => r.restore?.mbPerSecond, unit: 'MB/s', min: 1.5 },
  { dataset: 'mixed', store: 'fs', peer: 'restic', what: 'first backup peak RSS <= 2x restic', pick: (r) => (r.first ? r.first.peakRssBytes / MB : undefined), unit: 'MB', max: 2.0 },
  { dataset: 'small', store: 'fs', peer: 'restic', what: '200k small files: files/s >= 2x restic', pick: (r) => r.first?.filesPerSecond, unit: 'files/s', min: 2.0 },
  { dataset: 'mixed', store: 's3', peer: 'restic', what: 'MinIO: first backup MB/s >= 1.5x restic', pick: (r) => r.first?.mbPerSecond, unit: 'MB/s', min: 1.5 },
];

/** The real dataset's targets against each restic and kopia on a quiet machine. */
function realTargets(): RatioTarget[] {
  const targets: RatioTarget[] = [];
  for (const peer of ['restic', 'restic-new'] as const) {
    targets.push(
      { dataset: 'real', store: 'fs', peer, what: `first backup MB/s >= 3x ${peer}`, pick: (r) => r.first?.mbPerSecond, unit: 'MB/s', min: 3 },
      { dataset: 'real', store: 'fs', peer, what: `unchanged re-run time <= 0.4x ${peer}`, pick: (r) => r.unchanged?.wallSeconds, unit: 's', max: 0.4 },
      { dataset: 'real', store: 'fs', peer, what: `changed run time <= 0.5x ${peer}`, pick: (r) => r.changed?.wallSeconds, unit: 's', max: 0.5 },
      { dataset: 'real', store: 'fs', peer, what: `restore MB/s >= 1.5x ${peer}`, pick: (r) => r.restore?.mbPerSecond, unit: 'MB/s', min: 1.5 },
      { dataset: 'real', store: 's3', peer, what: `MinIO: restore MB/s >= 1.5x ${peer}`, pick: (r) => r.restore?.mbPerSecond, unit: 'MB/s', min: 1.5 },
      { dataset: 'real', store: 's3', peer, what: `MinIO: first backup MB/s >= 2.5x ${peer}`, pick: (r) => r.first?.mbPerSecond, unit: 'MB/s', min: 2.5 },
    );
  }
  targets.push({ dataset: 'real', store: 'fs', peer: 'kopia', what: 'first backup MB/s >= 1.5x kopia', pick: (r) => r.first?.mbPerSecond, unit: 'MB/s', min: 1.5 });
  return targets;
}

/** Under --contended: no step slower than either restic. */
function contendedTargets(): RatioTarget[] {
  const targets: RatioTarget[] = [];
  for (const dataset of ['real', 'mixed']) {
    for (const peer of ['restic', 'restic-new'] as const) {
      targets.push(
        { dataset, store: 'fs', peer, what: `contended: first backup not slower than ${peer}`, pick: (r) => r.first?.wallSeconds, unit: 's', max: 1 },
        { dataset, store: 'fs', peer, what: `contended: unchanged run not slower than ${peer}`, pick: (r) => r.unchanged?.wallSeconds, unit: 's', max: 1 },
        { dataset, store: 'fs', peer, what: `contended: changed run not slower than ${peer}`, pick: (r) => r.changed?.wallSeconds, unit: 's', max: 1 },
        { dataset, store: 'fs', peer, what: `contended: restore not slower than ${peer}`, pick: (r) => r.restore?.wallSeconds, unit: 's', max: 1 },
      );
    }
  }
  return targets;
}

/** RSS at 1M files may exceed RSS at 250k by at most this much and still count as "no growth" (sampling noise). */
export const FLAT_MEMORY_TOLERANCE = 0.1;
export const TINY_RSS_LIMIT_MB = 400;

function ratioCheck(results: ScenarioResult[], target: RatioTarget): TargetCheck {
  const label = `${target.dataset}/${target.store}: ${target.what}`;
  const cairn = find(results, 'cairn', target.store, target.dataset);
  const peer = find(results, target.peer, target.store, target.dataset);
  const a = cairn ? target.pick(cairn) : undefined;
  const b = peer ? target.pick(peer) : undefined;
  if (a === undefined || b === undefined || b === 0) {
    const missing = a === undefined ? 'cairn' : target.peer;
    return { verdict: 'N/A', text: `${label} (no ${missing} result)` };
  }
  const value = a / b;
  const pass = target.min !== undefined ? value >= target.min : value <= (target.max ?? Infinity);
  return {
    verdict: pass ? 'PASS' : 'FAIL',
    text: `${label}: cairn ${formatNumber(a, 2)} vs ${target.peer} ${formatNumber(b, 2)} ${target.unit} = ${value.toFixed(2)}x`,
  };
}

function memoryChecks(results: ScenarioResult[]): TargetCheck[] {
  const label = 'tiny/fs: 1M files peak RSS < 400 MB';
  const flatLabel = `tiny/fs: no RSS growth from 250k to 1M files (<= ${FLAT_MEMORY_TOLERANCE * 100}%)`;
  const cairn = find(results, 'cairn', 'fs', 'tiny');
  if (!cairn?.first) return [{ verdict: 'N/A', text: `${label} (no cairn result)` }, { verdict: 'N/A', text: `${flatLabel} (no cairn result)` }];
  const peakMb = cairn.first.peakRssBytes / MB;
  const at250k = cairn.first.rssCheckpoints.find((p) => p.filesProcessed === 250_000);
  const at1m = cairn.first.rssCheckpoints.find((p) => p.filesProcessed === 1_000_000);
  const checks: TargetCheck[] = [
    { verdict: peakMb < TINY_RSS_LIMIT_MB ? 'PASS' : 'FAIL', text: `${label}: cairn ${formatNumber(peakMb)} MB` },
  ];
  if (!at250k || !at1m) checks.push({ verdict: 'N/A', text: `${flatLabel} (no samples)` });
  else {
    const growth = at1m.rssBytes / at250k.rssBytes - 1;
    checks.push({
      verdict: growth <= FLAT_MEMORY_TOLERANCE ? 'PASS' : 'FAIL',
      text: `${flatLabel}: ${formatNumber(at250k.rssBytes / MB)} -> ${formatNumber(at1m.rssBytes / MB)} MB (${(growth * 100).toFixed(1)}%, counts from ${at1m.source})`,
    });
  }
  return checks;
}

/**
 * The performance targets (docs/benchmarks.md), each PASS, FAIL or N/A (when the dataset, store or a tool was not
 * run). Only the targets of datasets that ran are listed; a contended run is judged by the contended targets alone
 * (its absolute figures say little).
 */
export function targetChecks(results: ScenarioResult[], options: { contended?: boolean } = {}): TargetCheck[] {
  const ran = new Set(results.map((r) => r.dataset));
  const ranStore = new Set(results.map((r) => `${r.dataset}/${r.store}`));
  const targets = options.contended ? contendedTargets() : [...RATIO_TARGETS, ...realTargets()];
  // The mixed dataset's targets are listed whenever it ran (a missing store shows N/A); the real dataset's only for
  // the stores that ran.
  const checks = targets
    .filter((t) => (t.dataset === 'real' ? ranStore.has(`real/${t.store}`) : ran.has(t.dataset as ScenarioResult['dataset'])))
    .map((target) => ratioCheck(results, target));
  const verified = results.filter((r) => r.tool === 'cairn' && r.restore);
  for (const r of verified) {
    checks.push({
      verdict: r.restore!.verified ? 'PASS' : 'FAIL',
      text: `${r.dataset}/${r.store}: cairn restore identical to the source (bytes + mode)${r.restore!.verified ? '' : `: ${r.restore!.verifyDetail ?? ''}`}`,
    });
  }
  return [...checks, ...(options.contended || !ran.has('tiny') ? [] : memoryChecks(results))];
}

export function renderTargetChecks(checks: TargetCheck[]): string {
  return checks.map((c) => `${c.verdict.padEnd(4)}  ${c.text}`).join('\n');
}
