// kopia built from the Go module proxy at a pinned release (tools/peers/install-kopia.sh). Its data compression
// defaults to none; the global policy is set to zstd (klauspost zstd at its default level) so that all three tools
// compress. Splitter, hash and encryption stay at kopia's defaults.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { measureCommand, type Measurement } from '../measure.js';
import {
  baseEnv,
  BENCH_PASSWORD,
  ensureSucceeded,
  s3Credentials,
  type Availability,
  type BackupTool,
  type RepositoryPlace,
  type ToolSession,
} from './types.js';

const run = promisify(execFile);

export const KOPIA_VERSION = 'v0.23.1';
export const KOPIA_COMPRESSION = 'zstd';
export const KOPIA_SETTINGS = `global policy --compression=${KOPIA_COMPRESSION}; defaults otherwise (DYNAMIC-4M-BUZHASH, BLAKE2B-256-128, AES256-GCM-HMAC-SHA256); fresh cache and config per run`;

export function kopiaBinary(): string {
  const cache = process.env.CAIRN_CACHE ?? join(homedir(), '.cache', 'cairn');
  return join(cache, 'bin', `kopia-${KOPIA_VERSION}`, 'kopia');
}

/** Files done from kopia's progress line: " * 0 hashing, 1234 hashed (5.6 MB), 78 cached (9 KB), uploaded ...". */
export function parseKopiaProgress(line: string): number | undefined {
  const match = /(\d+) hashed \([^)]*\), (\d+) cached/.exec(line);
  return match ? Number(match[1]) + Number(match[2]) : undefined;
}

export function kopiaTool(binary = kopiaBinary()): BackupTool {
  return {
    name: 'kopia',
    async probe(): Promise<Availability> {
      if (!existsSync(binary)) return { available: false, reason: `kopia not built (tools/peers/install-kopia.sh)` };
      const { stdout } = await run(binary, ['--version']);
      return { available: true, version: `kopia ${stdout.trim().split(/\s+/)[0] ?? ''}`, settings: KOPIA_SETTINGS };
    },
    open(place: RepositoryPlace): ToolSession {
      const env = baseEnv({
        KOPIA_PASSWORD: BENCH_PASSWORD,
        KOPIA_CONFIG_PATH: join(place.workDir, 'kopia.config'),
        KOPIA_CACHE_DIRECTORY: join(place.workDir, 'kopia-cache'),
        KOPIA_LOG_DIR: join(place.workDir, 'kopia-logs'),
        KOPIA_CHECK_FOR_UPDATES: 'false',
        ...s3Credentials(place),
      });
      const measure = (args: string[], onLine?: (line: string) => number | undefined) =>
        measureCommand({ command: binary, args, env, serverPid: place.serverPid, onLine });
      const storageArgs = place.s3
        ? [
            's3',
            `--bucket=${place.s3.bucket}`,
            `--prefix=${place.s3.prefix}/`,
            `--endpoint=${new URL(place.s3.endpoint).host}`,
            `--region=${place.s3.region}`,
            '--disable-tls',
          ]
        : ['filesystem', `--path=${place.dir}`];
      return {
        async init(): Promise<Measurement> {
          const created = ensureSucceeded(
            'kopia',
            'repository create',
            await measure(['repository', 'create', ...storageArgs, '--no-check-for-updates']),
          );
          const policy = ensureSucceeded(
            'kopia',
            'policy set',
            await measure(['policy', 'set', '--global', `--compression=${KOPIA_COMPRESSION}`]),
          );
          return { ...created, wallSeconds: created.wallSeconds + policy.wallSeconds, cpuSeconds: created.cpuSeconds + policy.cpuSeconds };
        },
        async backup(source) {
          const measurement = await measure(
            ['snapshot', 'create', source, '--progress', '--progress-update-interval=250ms'],
            parseKopiaProgress,
          );
          ensureSucceeded('kopia', 'snapshot create', measurement);
          return { measurement };
        },
        async restore(source, target) {
          // A source path restores that source's latest snapshot into the target directly.
          const measurement = ensureSucceeded('kopia', 'snapshot restore', await measure(['snapshot', 'restore', source, target]));
          return { measurement, restoredRoot: target };
        },
      };
    },
  };
}
