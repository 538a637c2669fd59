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
import { startProcess, type ProcessRecord } from './processes.js';
import type { HealthCheck, S3Info } from './state.js';

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
  const [port, consolePort] = await freePorts(2, address);
  const endpoint = `http://${address}:${port}`;
  const s3: S3Info = {
    endpoint,
    region: S3_REGION,
    bucket: opts.bucket,
    accessKeyId: `cairn-${randomBytes(6).toString('hex')}`,
    secretAccessKey: randomBytes(24).toString('base64url'),
  };
  const proc = startProcess({
    name: 'minio',
    command: opts.binary,
    args: ['server', '--quiet', '--address', `${address}:${port}`, '--console-address', `${address}:${consolePort}`, join(opts.runDir, 'minio')],
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
  const health: HealthCheck = { name: 'minio', url: `${endpoint}/minio/health/ready` };
  await awaitHealthy(proc, health, {}, opts.timeoutMs);
  await createBucket(s3, opts.timeoutMs);
  return { process: proc, health, s3 };
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
