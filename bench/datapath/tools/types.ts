// What the harness needs from each backup tool: set a repository up, back up, restore, and say how it was set.
import type { Measurement } from '../measure.js';

/**
 * restic: Debian's package (0.14); restic-new: the newest release, built from the Go module proxy; cairn-before:
 * another cairn checkout (--baseline), for before/after figures from the same run.
 */
export type ToolName = 'cairn' | 'restic' | 'restic-new' | 'kopia' | 'cairn-before';
/** The tools --tools may name (cairn-before comes with --baseline). */
export const TOOL_NAMES: readonly ToolName[] = ['cairn', 'restic', 'restic-new', 'kopia'];
/** The tools cairn is compared with, in report order. */
export const PEER_NAMES: readonly ToolName[] = ['restic', 'restic-new', 'kopia', 'cairn-before'];

export type StoreName = 'fs' | 's3';
export const STORE_NAMES: readonly StoreName[] = ['fs', 's3'];

export interface S3Location {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  region: string;
  bucket: string;
  /** Without a trailing slash. */
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** Where one tool's repository for one run lives, and its private scratch space (caches, config, restores). */
export interface RepositoryPlace {
  store: StoreName;
  /** The filesystem repository directory (store "fs"). */
  dir: string;
  s3?: S3Location;
  /** Scratch space owned by this run: caches, config files, logs. */
  workDir: string;
  /** MinIO's pid, so its CPU during each command is reported. */
  serverPid?: number;
}

export interface ToolInfo {
  version: string;
  /** Exactly what was configured (compression, chunking, ...), for the report. */
  settings: string;
}

export type Availability = ({ available: true } & ToolInfo) | { available: false; reason: string };

export interface BackupResult {
  measurement: Measurement;
  snapshotId?: string;
  /** The tool's own account of the run (its JSON summary), when it gives one. */
  summary?: Record<string, unknown>;
}

export interface RestoreResult {
  measurement: Measurement;
  /** Where the restored copy of the source directory ended up (some tools nest it under the source's path). */
  restoredRoot: string;
}

export interface ToolSession {
  init(): Promise<Measurement>;
  /** wantProgress: the run needs files-done counts (memory checkpoints); tools that print them anyway ignore it. */
  backup(source: string, options?: { wantProgress?: boolean }): Promise<BackupResult>;
  restore(source: string, target: string): Promise<RestoreResult>;
}

export interface BackupTool {
  name: ToolName;
  probe(): Promise<Availability>;
  open(place: RepositoryPlace): ToolSession;
}

/** Every tool gets the same throwaway password; it protects benchmark data only and is never printed. */
export const BENCH_PASSWORD = 'cairn-bench-throwaway-password';

export class ToolCommandError extends Error {
  constructor(tool: ToolName, step: string, measurement: Measurement) {
    const how = measurement.signal ? `signal ${measurement.signal}` : `exit code ${measurement.exitCode}`;
    super(`${tool} ${step} failed (${how}): ${measurement.stderrTail.split('\n').slice(-5).join(' | ')}`);
    this.name = 'ToolCommandError';
  }
}

export function ensureSucceeded(tool: ToolName, step: string, measurement: Measurement): Measurement {
  if (measurement.exitCode !== 0) throw new ToolCommandError(tool, step, measurement);
  return measurement;
}

/** The environment for a tool: the harness's own minus anything that could point a tool at another repository. */
export function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(RESTIC_|KOPIA_|CAIRN_|AWS_)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export function s3Credentials(place: RepositoryPlace): Record<string, string> {
  return place.s3 ? { AWS_ACCESS_KEY_ID: place.s3.accessKeyId, AWS_SECRET_ACCESS_KEY: place.s3.secretAccessKey } : {};
}
