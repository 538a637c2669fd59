/**
 * The state file `<run-dir>/state.json`: everything `down`, `status`, the test fixture and other tools need to
 * find and reach a running local cluster. It holds the S3 secret, so it is written owner-only.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pki } from './pki.js';
import type { ProcessRecord } from './processes.js';
import type { RegistryInfo } from './registry.js';
import type { BinaryPaths } from './toolchain.js';

export interface S3Info {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface NodeInfo {
  name: string;
  ip: string;
  rootDir: string;
  /** The kubelet stand-in's API port (on `ip`). */
  port: number;
}

/** A URL `status` probes, with how to reach it. */
export interface HealthCheck {
  name: string;
  url: string;
  /** Present the admin client certificate and verify against the cluster CA. */
  adminTls?: boolean;
  /** Self-signed serving certificate (controller manager, scheduler). */
  insecure?: boolean;
}

export interface ClusterState {
  version: 1;
  name: string;
  runDir: string;
  /** What runs the nodes (absent in state files written before real nodes existed: the stand-in). */
  runtime?: 'local' | 'containerd';
  startedAt: string;
  kubeconfigPath: string;
  apiServerUrl: string;
  etcdUrl: string;
  serviceCidr: string;
  binaries: BinaryPaths;
  pki: Pki;
  s3: S3Info;
  /** The OCI registry nodes pull images from (plain HTTP). */
  registry: RegistryInfo;
  nodes: NodeInfo[];
  /** Every process `down` stops, in start order. */
  processes: ProcessRecord[];
  health: HealthCheck[];
}

export function stateFile(runDir: string): string {
  return join(runDir, 'state.json');
}

export function writeState(state: ClusterState): void {
  const file = stateFile(state.runDir);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

export function readState(runDir: string): ClusterState | undefined {
  const file = stateFile(runDir);
  if (!existsSync(file)) return undefined;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  if (parsed.version !== 1) throw new Error(`${file}: unknown state version ${String(parsed.version)}`);
  return parsed;
}
