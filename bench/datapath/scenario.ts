// One tool x store x dataset: init, first backup, unchanged re-run, 5 %-changed run, full restore with
// verification. The dataset is always put back to its base state afterwards, whatever happened.
import { existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openFreshFilesystem, type RestoreContent } from './fresh-fs.js';
import { applyModification, modifiedTotals, undoModification, type StoredDataset } from './dataset-store.js';
import type { Measurement } from './measure.js';
import type { MinioServer } from './minio.js';
import type { FirstBackupFigures, RssCheckpoint, ScenarioResult, StepFigures } from './results.js';
import { digestTree, firstDifference, type TreeDigest } from './tree-digest.js';
import type { BackupTool, RepositoryPlace, StoreName } from './tools/types.js';
import type { Trash } from './trash.js';

export interface ScenarioOptions {
  tool: BackupTool;
  store: StoreName;
  stored: StoredDataset;
  scratchDir: string;
  minio?: MinioServer;
  /** Digest of the source tree after modification `variant` (computed once per dataset and variant, then reused). */
  modifiedDigest: (variant: number) => TreeDigest;
  /** How many times the unchanged and the 5 %-changed runs are repeated (the median is reported). */
  runs: number;
  keepRepositories: boolean;
  /** Where finished restores and repositories go until the run ends. */
  trash: Trash;
  /**
   * Restore into a freshly made filesystem each time (see fresh-fs.ts); without it, or when making one fails (then
   * onFailure is told why), into <workDir>/restore, which goes to the trash afterwards.
   */
  freshFilesystems?: { onFailure: (reason: string) => void };
  beforeTimedStep?: () => void;
  log: (line: string) => void;
}

const MEMORY_CHECKPOINTS = [250_000, 1_000_000];
const TIMELINE_POINTS = 200;

/** The run with the median wall time (the lower middle one for an even count). */
export function medianRun<T extends { wallSeconds: number }>(runs: T[]): T {
  const sorted = [...runs].sort((a, b) => a.wallSeconds - b.wallSeconds);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function stepFigures(m: Measurement): StepFigures {
  return {
    wallSeconds: m.wallSeconds,
    cpuSeconds: m.cpuSeconds,
    ...(m.serverCpuSeconds === undefined ? {} : { serverCpuSeconds: m.serverCpuSeconds }),
    othersCpuSeconds: m.othersCpuSeconds,
    peakRssBytes: m.peakRssBytes,
  };
}

/** Resident memory when the tool had processed N files: from its progress output, else from elapsed time. */
export function rssCheckpoints(m: Measurement, totalFiles: number): RssCheckpoint[] {
  const out: RssCheckpoint[] = [];
  const withProgress = m.samples.some((s) => s.filesDone !== undefined);
  for (const target of MEMORY_CHECKPOINTS) {
    if (target > totalFiles || m.samples.length === 0) continue;
    if (withProgress) {
      const hit = m.samples.find((s) => (s.filesDone ?? 0) >= target) ?? m.samples[m.samples.length - 1]!;
      out.push({ filesProcessed: target, rssBytes: hit.rssBytes, source: 'progress' });
    } else {
      const atMs = (target / totalFiles) * m.wallSeconds * 1000;
      const hit = m.samples.find((s) => s.tMs >= atMs) ?? m.samples[m.samples.length - 1]!;
      out.push({ filesProcessed: target, rssBytes: hit.rssBytes, source: 'time' });
    }
  }
  return out;
}

function timeline(m: Measurement): [number, number][] {
  const step = Math.max(1, Math.ceil(m.samples.length / TIMELINE_POINTS));
  return m.samples.filter((_, i) => i % step === 0).map((s) => [s.tMs, s.rssBytes]);
}

function directoryBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    total += stat.isDirectory() ? directoryBytes(path) : stat.size;
  }
  return total;
}

interface RestoreTarget {
  dir: string;
  kind: 'fresh filesystem' | 'directory';
  /** Unmounts and deletes a fresh filesystem, or moves a directory to the trash. */
  release(): void;
}

function openRestoreTarget(options: ScenarioOptions, workDir: string, content: RestoreContent): RestoreTarget {
  if (options.freshFilesystems) {
    try {
      const fs = openFreshFilesystem({ scratchDir: options.scratchDir, content });
      return { dir: fs.dir, kind: 'fresh filesystem', release: () => fs.close() };
    } catch (error) {
      options.freshFilesystems.onFailure((error as Error).message);
    }
  }
  const dir = join(workDir, 'restore');
  return { dir, kind: 'directory', release: () => options.trash.discard(dir) };
}

function fmtRuns(seconds: number[]): string {
  const each = `${seconds.map((x) => x.toFixed(2)).join(' / ')} s`;
  if (seconds.length === 1) return each;
  const median = medianRun(seconds.map((wallSeconds) => ({ wallSeconds }))).wallSeconds;
  return `${each} (median ${median.toFixed(2)})`;
}

export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const { tool, store, stored, scratchDir, minio, log } = options;
  const dataset = stored.dataset.name;
  const result: ScenarioResult = { tool: tool.name, store, dataset, status: 'ok' };
  const workDir = join(scratchDir, 'runs', `${dataset}-${store}-${tool.name}`);
  options.trash.discard(workDir);
  mkdirSync(workDir, { recursive: true });
  const prefix = `${dataset}-${tool.name}-${Date.now()}`;
  const place: RepositoryPlace = {
    store,
    dir: join(workDir, 'repo'),
    workDir,
    ...(store === 's3' && minio ? { s3: minio.location(prefix), serverPid: minio.pid } : {}),
  };
  const repositoryBytes = async (): Promise<number> =>
    store === 's3' && minio ? minio.objectBytes(prefix) : directoryBytes(place.dir);
  const session = tool.open(place);
  const label = `${tool.name}/${store}/${dataset}`;
  let modified = false;
  try {
    result.init = stepFigures(await session.init());

    options.beforeTimedStep?.();
    const first = await session.backup(stored.root, { wantProgress: stored.base.files >= MEMORY_CHECKPOINTS[0]! });
    const firstFigures: FirstBackupFigures = {
      ...stepFigures(first.measurement),
      mbPerSecond: stored.base.bytes / 1e6 / first.measurement.wallSeconds,
      filesPerSecond: stored.base.files / first.measurement.wallSeconds,
      rssCheckpoints: rssCheckpoints(first.measurement, stored.base.files),
      rssTimeline: timeline(first.measurement),
    };
    result.first = firstFigures;
    result.repositoryBytesAfterFirst = await repositoryBytes();
    log(`${label}: first backup ${first.measurement.wallSeconds.toFixed(2)} s (${firstFigures.mbPerSecond.toFixed(0)} MB/s)`);

    const runs = Math.max(1, options.runs);
    const summaries: (Record<string, unknown> | undefined)[] = [first.summary];
    const unchangedRuns: StepFigures[] = [];
    for (let i = 0; i < runs; i++) {
      const unchanged = await session.backup(stored.root);
      unchangedRuns.push(stepFigures(unchanged.measurement));
      summaries.push(unchanged.summary);
    }
    result.unchanged = medianRun(unchangedRuns);
    result.unchangedRunsSeconds = unchangedRuns.map((r) => r.wallSeconds);
    log(`${label}: unchanged re-run ${fmtRuns(result.unchangedRunsSeconds)}`);

    // Each changed run writes new contents into the same 5 % of the files (variant 1 is the recipe's).
    const changedRuns: StepFigures[] = [];
    for (let variant = 1; variant <= runs; variant++) {
      applyModification(scratchDir, stored, variant);
      modified = true;
      const changed = await session.backup(stored.root);
      changedRuns.push(stepFigures(changed.measurement));
      summaries.push(changed.summary);
    }
    result.changed = medianRun(changedRuns);
    result.changedRunsSeconds = changedRuns.map((r) => r.wallSeconds);
    result.repositoryBytesAfterChanged = await repositoryBytes();
    log(`${label}: 5 %-changed run ${fmtRuns(result.changedRunsSeconds)}`);
    result.toolSummaries = summaries.filter((s): s is Record<string, unknown> => s !== undefined);

    const restoredBytes = modifiedTotals(stored.dataset, stored.base, runs).bytes;
    const target = openRestoreTarget(options, workDir, { bytes: restoredBytes, files: stored.base.files });
    try {
      options.beforeTimedStep?.();
      const restored = await session.restore(stored.root, target.dir);
      const expected = options.modifiedDigest(runs);
      const actual = existsSync(restored.restoredRoot) ? digestTree(restored.restoredRoot) : undefined;
      const verified = actual?.sha256 === expected.sha256;
      result.restore = {
        ...stepFigures(restored.measurement),
        mbPerSecond: restoredBytes / 1e6 / restored.measurement.wallSeconds,
        filesPerSecond: stored.base.files / restored.measurement.wallSeconds,
        verified,
        into: target.kind,
        ...(verified
          ? {}
          : {
              verifyDetail: actual
                ? (firstDifference(stored.root, restored.restoredRoot) ?? 'digest differs')
                : `nothing restored at ${restored.restoredRoot}`,
            }),
      };
      log(
        `${label}: restore ${restored.measurement.wallSeconds.toFixed(2)} s into a ${target.kind}, ` +
          `${verified ? 'verified' : `NOT VERIFIED: ${result.restore.verifyDetail}`}`,
      );
    } finally {
      try {
        target.release();
      } catch (error) {
        log(`${label}: could not remove the restore target: ${(error as Error).message}`);
      }
    }
  } catch (error) {
    result.status = 'failed';
    result.reason = (error as Error).message;
    log(`${label}: FAILED: ${result.reason}`);
  } finally {
    if (modified) undoModification(scratchDir, stored);
    if (!options.keepRepositories) {
      options.trash.discard(workDir);
      if (store === 's3' && minio) await minio.deletePrefix(prefix).catch(() => undefined);
    }
  }
  return result;
}
