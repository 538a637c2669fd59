// restic from Debian (tools/peers/install-restic.sh) and the newest release built from the Go module proxy
// (tools/peers/install-restic-latest.sh). Repository format 2 with `--compression auto` (zstd at its default
// level); everything else at restic's defaults.
import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { measureCommand } from '../measure.js';
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

export const RESTIC_SETTINGS =
  'repository version 2, --compression auto (zstd default level), defaults otherwise (CDC 512 KiB-8 MiB, 16 MiB packs); fresh RESTIC_CACHE_DIR per run';

function repositoryUrl(place: RepositoryPlace): string {
  if (!place.s3) return place.dir;
  return `s3:${place.s3.endpoint}/${place.s3.bucket}/${place.s3.prefix}`;
}

interface ResticMessage {
  message_type?: string;
  files_done?: number;
  snapshot_id?: string;
}

function parseMessage(line: string): ResticMessage | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as ResticMessage;
  } catch {
    return undefined;
  }
}

/** Where install-restic-latest.sh puts the newest release (RESTIC_VERSION overrides the pin, as for the script). */
export function newestResticBinary(): string {
  const version = process.env.RESTIC_VERSION ?? 'v0.19.1';
  return join(process.env.CAIRN_CACHE ?? join(homedir(), '.cache', 'cairn'), 'bin', `restic-${version}`, 'restic');
}

export function resticTool(binary = 'restic', name: 'restic' | 'restic-new' = 'restic'): BackupTool {
  const installer = name === 'restic' ? 'tools/peers/install-restic.sh' : 'tools/peers/install-restic-latest.sh';
  return {
    name,
    async probe(): Promise<Availability> {
      try {
        const { stdout } = await run(binary, ['version']);
        return { available: true, version: stdout.trim(), settings: RESTIC_SETTINGS };
      } catch {
        return { available: false, reason: `${binary} not installed (${installer})` };
      }
    },
    open(place: RepositoryPlace): ToolSession {
      const env = baseEnv({
        RESTIC_PASSWORD: BENCH_PASSWORD,
        RESTIC_REPOSITORY: repositoryUrl(place),
        RESTIC_CACHE_DIR: join(place.workDir, 'restic-cache'),
        // Progress as JSON on stdout a few times a second: the files-done count for the memory curve.
        RESTIC_PROGRESS_FPS: '4',
        ...s3Credentials(place),
      });
      const measure = (args: string[], onLine?: (line: string) => number | undefined) =>
        measureCommand({ command: binary, args, env, serverPid: place.serverPid, onLine });
      return {
        async init() {
          return ensureSucceeded(name, 'init', await measure(['init', '--repository-version', '2']));
        },
        async backup(source) {
          let summary: ResticMessage | undefined;
          const measurement = await measure(['backup', '--json', '--compression', 'auto', source], (line) => {
            const message = parseMessage(line);
            if (message?.message_type === 'summary') summary = message;
            return message?.message_type === 'status' ? message.files_done : undefined;
          });
          ensureSucceeded(name, 'backup', measurement);
          return {
            measurement,
            ...(summary?.snapshot_id ? { snapshotId: summary.snapshot_id } : {}),
            ...(summary ? { summary: summary as Record<string, unknown> } : {}),
          };
        },
        async restore(source, target) {
          const measurement = ensureSucceeded(name, 'restore', await measure(['restore', 'latest', '--target', target]));
          // restic recreates the source's absolute path below the target.
          return { measurement, restoredRoot: join(target, source) };
        },
      };
    },
  };
}
