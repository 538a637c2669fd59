/**
 * MinIO on loopback with generated root credentials and one bucket: the S3 server backups are written to.
 * Data lives under <run-dir>/minio; the credentials only ever go to the state file (owner-only), never a log.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { waitFor } from '../../test/support/wait.js';
import { awaitHealthy, type ComponentStart } from './control-plane.js';
import { freePorts } from './ports.js';
import { isRunning, startProcess, stopProcesses, type ProcessRecord } from './processes.js';
import { readState, writeState, type HealthCheck, type S3Info } from './state.js';

export const DEFAULT_BUCKET = 'cairn-test';
export const S3_REGION = 'us-east-1';

export interface MinioStart extends ComponentStart {
  s3: S3Info;
}

export interface MinioOptions {
  runDir: string;
  binary: string;
  bucket: string;
  /** Address to listen on (loopback, or the host's address on the real nodes' bridge). */
  address?: string;
  onStarted: (p: ProcessRecord) => void;
  timeoutMs: number;
}

export async function startMinio(opts: MinioOptions): Promise<MinioStart> {
  const address = opts.address ?? '127.0.0.1';
  const [port] = await freePorts(1, address);
  const s3: S3Info = {
    endpoint: `http://${address}:${port}`,
    region: S3_REGION,
    bucket: opts.bucket,
    accessKeyId: `cairn-${randomBytes(6).toString('hex')}`,
    secretAccessKey: randomBytes(24).toString('base64url'),
  };
  const started = await launchMinio({ runDir: opts.runDir, binary: opts.binary, s3, onStarted: opts.onStarted, timeoutMs: opts.timeoutMs });
  await createBucket(s3, opts.timeoutMs);
  return { ...started, s3 };
}

/** Runs MinIO for `s3` (its endpoint's address and port, its credentials) on the run directory's data, until healthy. */
async function launchMinio(opts: { runDir: string; binary: string; s3: S3Info; onStarted: (p: ProcessRecord) => void; timeoutMs: number }): Promise<ComponentStart> {
  const { s3 } = opts;
  const url = new URL(s3.endpoint);
  const [consolePort] = await freePorts(1, url.hostname);
  const proc = startProcess({
    name: 'minio',
    command: opts.binary,
    args: ['server', '--quiet', '--address', url.host, '--console-address', `${url.hostname}:${consolePort}`, join(opts.runDir, 'minio')],
    env: {
      ...process.env,
      MINIO_ROOT_USER: s3.accessKeyId,
      MINIO_ROOT_PASSWORD: s3.secretAccessKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
      MINIO_REGION: S3_REGION,
    },
    logFile: join(opts.runDir, 'logs', 'minio.log'),
  });
  opts.onStarted(proc);
  const health: HealthCheck = { name: 'minio', url: `${s3.endpoint}/minio/health/ready` };
  await awaitHealthy(proc, health, {}, opts.timeoutMs);
  return { process: proc, health };
}

/**
 * Stops a running cluster's MinIO (SIGTERM, then SIGKILL after `graceMs`): clients get "connection refused" until
 * startMinioAgain. For tests of object-store outages; the bucket's data stays on disk.
 */
export async function stopMinio(runDir: string, graceMs = 5_000): Promise<void> {
  const state = readState(runDir);
  const rec = state?.processes.find((p) => p.name === 'minio');
  if (!state || !rec) throw new Error(`no MinIO recorded in ${runDir}`);
  await stopProcesses([rec], { graceMs });
}

/**
 * Starts a stopped MinIO again on the same address, port, credentials and data, and records the new process in
 * the state file (so `down` stops it). Returns once it answers healthy and the bucket is reachable.
 */
export async function startMinioAgain(runDir: string, timeoutMs = 60_000): Promise<void> {
  const state = readState(runDir);
  const old = state?.processes.find((p) => p.name === 'minio');
  if (!state || !old) throw new Error(`no MinIO recorded in ${runDir}`);
  if (isRunning(old)) return;
  await launchMinio({
    runDir,
    binary: state.binaries.minio,
    s3: state.s3,
    // Recorded before the health wait, so a MinIO that never gets healthy is still stopped by `down`.
    onStarted: (p) => writeState({ ...state, processes: state.processes.map((x) => (x === old ? p : x)) }),
    timeoutMs,
  });
  await createBucket(state.s3, timeoutMs);
}

export function s3Client(s3: S3Info): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
}

async function createBucket(s3: S3Info, timeoutMs: number): Promise<void> {
  const client = s3Client(s3);
  try {
    // Ready can come a moment before the IAM subsystem accepts the root credentials: retry until it does.
    await waitFor(
      async () => {
        try {
          await client.send(new HeadBucketCommand({ Bucket: s3.bucket }));
        } catch {
          await client.send(new CreateBucketCommand({ Bucket: s3.bucket }));
        }
        return true;
      },
      { timeoutMs, intervalMs: 200, description: `bucket ${s3.bucket} created in MinIO at ${s3.endpoint}` },
    );
  } finally {
    client.destroy();
  }
}
