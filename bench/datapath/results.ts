// The shape of one benchmark run's results (also the JSON written to bench/results/<date>.json).
import type { DatasetName } from './datasets.js';
import type { StoreName, ToolName } from './tools/types.js';

export interface StepFigures {
  wallSeconds: number;
  /** CPU (user + system) of the tool's process tree. */
  cpuSeconds: number;
  /** CPU MinIO spent during the step (S3 rows only): it shares the same 2 cores. */
  serverCpuSeconds?: number;
  /** CPU everything else on the machine used during the step (a shared machine's noise). */
  othersCpuSeconds: number;
  peakRssBytes: number;
}

export interface RssCheckpoint {
  filesProcessed: number;
  rssBytes: number;
  /** "progress": the tool's own files-done count; "time": estimated from elapsed time (no progress output). */
  source: 'progress' | 'time';
}

export interface FirstBackupFigures extends StepFigures {
  mbPerSecond: number;
  filesPerSecond: number;
  rssCheckpoints: RssCheckpoint[];
  /** Up to ~200 (ms, RSS bytes) points of the tree's resident memory over the run. */
  rssTimeline: [number, number][];
}

export interface RestoreFigures extends StepFigures {
  mbPerSecond: number;
  filesPerSecond: number;
  verified: boolean;
  /** What the tool restored into: a freshly made ext4 filesystem (the default) or a directory on the scratch disk. */
  into?: 'fresh filesystem' | 'directory';
  /** What differed, when the restored tree is not identical (bytes and permission bits) to the source. */
  verifyDetail?: string;
}

export type RowStatus = 'ok' | 'failed' | 'skipped' | 'not available';

export interface ScenarioResult {
  tool: ToolName;
  store: StoreName;
  dataset: DatasetName;
  status: RowStatus;
  /** Why the row is not "ok". */
  reason?: string;
  init?: StepFigures;
  first?: FirstBackupFigures;
  repositoryBytesAfterFirst?: number;
  /** The median (by wall time) of the unchanged re-runs; every run's wall time in unchangedRunsSeconds. */
  unchanged?: StepFigures;
  unchangedRunsSeconds?: number[];
  /** The median of the 5 %-changed runs (each against the previous snapshot, with new contents each time). */
  changed?: StepFigures;
  changedRunsSeconds?: number[];
  repositoryBytesAfterChanged?: number;
  restore?: RestoreFigures;
  /** The tool's own summaries (e.g. restic's and cairn's JSON), first/unchanged/changed. */
  toolSummaries?: Record<string, unknown>[];
}

export interface DatasetInfo {
  name: DatasetName;
  title: string;
  files: number;
  bytes: number;
  changedFiles: number;
  changedBytes: number;
  recipeHash: string;
}

export interface ToolDescription {
  name: ToolName;
  available: boolean;
  version?: string;
  settings?: string;
  reason?: string;
}

export interface BenchRun {
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; memoryGiB: number; kernel: string; node: string };
  tools: ToolDescription[];
  minio?: string;
  /** Busy-loop processes that competed for the CPU during every step (--contended). */
  contended?: number;
  notes: string[];
  datasets: DatasetInfo[];
  results: ScenarioResult[];
}
