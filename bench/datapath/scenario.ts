// One tool x store x dataset: init, first backup, unchanged re-runs, changed runs, full restore with
// verification, with the tools' steps interleaved. The dataset is always put back to its base state afterwards.
import { existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openFreshFilesystem, type RestoreContent } from './fresh-fs.js';
import { applyModification, modifiedTotals, undoModification, type StoredDataset } from './dataset-store.js';
import type { Measurement } from './measure.js';
import type { MinioServer } from './minio.js';
import type { FirstBackupFigures, RssCheckpoint, ScenarioResult, StepFigures } from './results.js';
import { digestTree, firstDifference, type TreeDigest } from './tree-digest.js';
import type { BackupTool, RepositoryPlace, StoreName, ToolSession } from './tools/types.js';
import type { Trash } from './trash.js';

export interface ScenarioOptions {
  tool: BackupTool;
  store: StoreName;
  stored: StoredDataset;
  scratchDir: string;
  minio?: MinioServer;
  /** Digest of the source tree after modification `variant`, 0 the base (computed once per dataset and variant). */
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


/**
 * One tool x store x dataset, step by step, so that a driver can interleave the tools: every tool's first backup,
 * then every tool's unchanged runs, then (after the driver changed the dataset) every tool's changed run, then the
 * restores. On a machine whose speed drifts (other work, a fixed competing load), interleaving puts the same
 * drift on every tool. A step that fails marks the row failed; later steps of that tool are skipped.
 */
export class Scenario {
  readonly result: ScenarioResult;
  private readonly label: string;
  private readonly workDir: string;
  private readonly prefix: string;
  private readonly session: ToolSession;
  private readonly repositoryBytes: () => Promise<number>;
  private readonly summaries: (Record<string, unknown> | undefined)[] = [];
  private readonly unchangedRuns: StepFigures[] = [];
  private readonly changedRuns: StepFigures[] = [];

  constructor(private readonly options: ScenarioOptions) {
    const { tool, store, stored, scratchDir, minio } = options;
    const dataset = stored.dataset.name;
    this.result = { tool: tool.name, store, dataset, status: 'ok' };
    this.workDir = join(scratchDir, 'runs', `${dataset}-${store}-${tool.name}`);
    options.trash.discard(this.workDir);
    mkdirSync(this.workDir, { recursive: true });
    this.prefix = `${dataset}-${tool.name}-${Date.now()}`;
    const place: RepositoryPlace = {
      store,
      dir: join(this.workDir, 'repo'),
      workDir: this.workDir,
      ...(store === 's3' && minio ? { s3: minio.location(this.prefix), serverPid: minio.pid } : {}),
    };
    this.repositoryBytes = async (): Promise<number> =>
      store === 's3' && minio ? minio.objectBytes(this.prefix) : directoryBytes(place.dir);
    this.session = tool.open(place);
    this.label = `${tool.name}/${store}/${dataset}`;
  }

  get ok(): boolean {
    return this.result.status === 'ok';
  }

  private async step(what: () => Promise<void>): Promise<void> {
    if (!this.ok) return;
    try {
      await what();
    } catch (error) {
      this.result.status = 'failed';
      this.result.reason = (error as Error).message;
      this.options.log(`${this.label}: FAILED: ${this.result.reason}`);
    }
  }

  async init(): Promise<void> {
    await this.step(async () => {
      this.result.init = stepFigures(await this.session.init());
    });
  }

  async firstBackup(): Promise<void> {
    const { stored } = this.options;
    await this.step(async () => {
      this.options.beforeTimedStep?.();
      const first = await this.session.backup(stored.root, { wantProgress: stored.base.files >= MEMORY_CHECKPOINTS[0]! });
      const figures: FirstBackupFigures = {
        ...stepFigures(first.measurement),
        mbPerSecond: stored.base.bytes / 1e6 / first.measurement.wallSeconds,
        filesPerSecond: stored.base.files / first.measurement.wallSeconds,
        rssCheckpoints: rssCheckpoints(first.measurement, stored.base.files),
        rssTimeline: timeline(first.measurement),
      };
      this.result.first = figures;
      this.result.repositoryBytesAfterFirst = await this.repositoryBytes();
      this.summaries.push(first.summary);
      this.options.log(`${this.label}: first backup ${first.measurement.wallSeconds.toFixed(2)} s (${figures.mbPerSecond.toFixed(0)} MB/s, ${first.measurement.cpuSeconds.toFixed(1)} CPU-s)`);
    });
  }

  async unchangedBackup(): Promise<void> {
    await this.step(async () => {
      const unchanged = await this.session.backup(this.options.stored.root);
      this.unchangedRuns.push(stepFigures(unchanged.measurement));
      this.summaries.push(unchanged.summary);
      this.result.unchanged = medianRun(this.unchangedRuns);
      this.result.unchangedRunsSeconds = this.unchangedRuns.map((r) => r.wallSeconds);
      this.options.log(`${this.label}: unchanged re-run ${unchanged.measurement.wallSeconds.toFixed(2)} s, ${unchanged.measurement.cpuSeconds.toFixed(1)} CPU-s`);
    });
  }

  /** A backup after the driver applied the next variant of the dataset's change. */
  async changedBackup(): Promise<void> {
    await this.step(async () => {
      const changed = await this.session.backup(this.options.stored.root);
      this.changedRuns.push(stepFigures(changed.measurement));
      this.summaries.push(changed.summary);
      this.result.changed = medianRun(this.changedRuns);
      this.result.changedRunsSeconds = this.changedRuns.map((r) => r.wallSeconds);
      this.result.repositoryBytesAfterChanged = await this.repositoryBytes();
      this.options.log(`${this.label}: changed run ${changed.measurement.wallSeconds.toFixed(2)} s, ${changed.measurement.cpuSeconds.toFixed(1)} CPU-s`);
    });
  }

  /** Restores the latest snapshot (taken after `variant` changes) and verifies it against the source. */
  async restore(variant: number): Promise<void> {
    const { stored } = this.options;
    await this.step(async () => {
      const totals = modifiedTotals(stored.dataset, stored.base, variant);
      const restoredBytes = variant === 0 ? stored.base.bytes : totals.bytes;
      const restoredFiles = variant === 0 ? stored.base.files : totals.files;
      const target = openRestoreTarget(this.options, this.workDir, { bytes: restoredBytes, files: restoredFiles });
      try {
        this.options.beforeTimedStep?.();
        const restored = await this.session.restore(stored.root, target.dir);
        const expected = this.options.modifiedDigest(variant);
        const actual = existsSync(restored.restoredRoot) ? digestTree(restored.restoredRoot) : undefined;
        const verified = actual?.sha256 === expected.sha256;
        this.result.restore = {
          ...stepFigures(restored.measurement),
          mbPerSecond: restoredBytes / 1e6 / restored.measurement.wallSeconds,
          filesPerSecond: restoredFiles / restored.measurement.wallSeconds,
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
        this.options.log(
          `${this.label}: restore ${restored.measurement.wallSeconds.toFixed(2)} s (${restored.measurement.cpuSeconds.toFixed(1)} CPU-s) into a ${target.kind}, ` +
            `${verified ? 'verified' : `NOT VERIFIED: ${this.result.restore.verifyDetail}`}`,
        );
      } finally {
        try {
          target.release();
        } catch (error) {
          this.options.log(`${this.label}: could not remove the restore target: ${(error as Error).message}`);
        }
      }
    });
  }

  /** Deletes the repository (unless kept) and returns the row. */
  async finish(): Promise<ScenarioResult> {
    this.result.toolSummaries = this.summaries.filter((s): s is Record<string, unknown> => s !== undefined);
    if (!this.options.keepRepositories) {
      this.options.trash.discard(this.workDir);
      if (this.options.store === 's3' && this.options.minio) await this.options.minio.deletePrefix(this.prefix).catch(() => undefined);
    }
    return this.result;
  }
}

/** Rotates a list by `by` places, so repeated rounds do not always run the tools in the same order. */
export function rotated<T>(items: T[], by: number): T[] {
  if (items.length === 0) return items;
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export interface InterleavedOptions {
  scenarios: Scenario[];
  stored: StoredDataset;
  scratchDir: string;
  runs: number;
  interrupted: () => boolean;
}

/**
 * Runs the steps of several tools' scenarios interleaved (see Scenario). The dataset is changed once per variant,
 * before every tool's changed run, and always put back to its base state afterwards.
 */
export async function runInterleaved({ scenarios, stored, scratchDir, runs, interrupted }: InterleavedOptions): Promise<ScenarioResult[]> {
  let modified = false;
  let variant = 0;
  try {
    for (const s of scenarios) await s.init();
    for (const s of scenarios) if (!interrupted()) await s.firstBackup();
    for (let i = 0; i < runs && !interrupted(); i++) for (const s of rotated(scenarios, i)) await s.unchangedBackup();
    for (let v = 1; v <= runs && !interrupted(); v++) {
      if (!scenarios.some((s) => s.ok)) break;
      modified = true;
      applyModification(scratchDir, stored, v);
      variant = v;
      for (const s of rotated(scenarios, v - 1)) await s.changedBackup();
    }
    for (const s of scenarios) if (!interrupted()) await s.restore(variant);
  } finally {
    if (modified) undoModification(scratchDir, stored);
  }
  const results: ScenarioResult[] = [];
  for (const s of scenarios) results.push(await s.finish());
  return results;
}
