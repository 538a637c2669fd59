// A throwaway MinIO on a free loopback port with its data in a temp dir, for the S3 rows. The binary is the one the
// test bed builds into ~/.cache/cairn/bin (or CAIRN_MINIO_BIN); without it the S3 rows are skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import type { S3Location } from './tools/types.js';

export interface MinioServer {
  endpoint: string;
  pid: number;
  version: string;
  location(prefix: string): S3Location;
  objectBytes(prefix: string): Promise<number>;
  deletePrefix(prefix: string): Promise<void>;
  /** True when a small object can be written, read back and deleted (MinIO may have taken its drive offline). */
  healthy(): Promise<boolean>;
  stop(): Promise<void>;
}

const BUCKET = 'cairn-bench';
const REGION = 'us-east-1';

/** The MinIO binary the test bed caches (~/.cache/cairn/bin/minio-<version>), or undefined when it is not built. */
export function findMinioBinary(): string | undefined {
  const explicit = process.env.CAIRN_MINIO_BIN;
  if (explicit) return existsSync(explicit) ? explicit : undefined;
  const binDir = join(process.env.CAIRN_CACHE ?? join(homedir(), '.cache', 'cairn'), 'bin');
  if (!existsSync(binDir)) return undefined;
  const candidates = readdirSync(binDir)
    .filter((name) => name === 'minio' || name.startsWith('minio-'))
    .sort()
    .reverse()
    .map((name) => join(binDir, name))
    .map((path) => (statSync(path).isDirectory() ? join(path, 'minio') : path));
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilReady(endpoint: string, child: ChildProcess, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`minio exited with code ${child.exitCode} while starting`);
    try {
      const response = await fetch(`${endpoint}/minio/health/ready`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await delay(100);
  }
  throw new Error(`minio did not become ready within ${deadlineMs / 1000} s`);
}

export async function startMinio(binary: string, dataDir: string): Promise<MinioServer> {
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  const consolePort = await freePort();
  const accessKeyId = `bench${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(18).toString('base64url');
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(
    binary,
    ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      env: {
        ...process.env,
        MINIO_ROOT_USER: accessKeyId,
        MINIO_ROOT_PASSWORD: secretAccessKey,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
        MINIO_REGION: REGION,
        // This disk stalls for seconds when many files are deleted (ext4 with discard) and other work shares it;
        // at the default 30 s MinIO then takes its only drive offline and answers 503 to everything.
        MINIO_DRIVE_MAX_TIMEOUT: '5m',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, delay(10_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(endpoint, child, 30_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}: ${stderr.trim()}`, { cause: error });
  }
  const client = new S3Client({
    endpoint,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
  // "Ready" can come a moment before the root credentials are accepted: retry the bucket creation briefly.
  for (let attempt = 1; ; attempt++) {
    try {
      await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
      break;
    } catch (error) {
      if (attempt >= 50) {
        client.destroy();
        await stop();
        throw new Error(`minio: could not create bucket ${BUCKET}: ${(error as Error).message}`, { cause: error });
      }
      await delay(200);
    }
  }

  async function* listPrefix(prefix: string): AsyncGenerator<{ key: string; size: number }> {
    let token: string | undefined;
    do {
      const page: ListObjectsV2CommandOutput = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${prefix}/`, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) if (object.Key) yield { key: object.Key, size: object.Size ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  return {
    endpoint,
    pid: child.pid!,
    version: basename(binary),
    location: (prefix) => ({ endpoint, region: REGION, bucket: BUCKET, prefix, accessKeyId, secretAccessKey }),
    async objectBytes(prefix) {
      let total = 0;
      for await (const object of listPrefix(prefix)) total += object.size;
      return total;
    },
    async deletePrefix(prefix) {
      // Collect first: deleting while paging through a listing can skip keys.
      const keys: { Key: string }[] = [];
      for await (const object of listPrefix(prefix)) keys.push({ Key: object.key });
      for (let i = 0; i < keys.length; i += 1000) {
        await client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.slice(i, i + 1000), Quiet: true } }));
      }
    },
    async healthy() {
      const key = `health/${randomBytes(6).toString('hex')}`;
      try {
        await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'ok' }));
        await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
        await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
        return true;
      } catch {
        return false;
      }
    },
    async stop() {
      client.destroy();
      await stop();
    },
  };
}
