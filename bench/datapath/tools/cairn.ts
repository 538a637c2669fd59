// cairn through its own CLI (the fixed contract of `cairn repo ...`), run from this checkout's dist/ with the Node
// that runs the harness. Settings are cairn's defaults; compression is always on in cairn.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

export const CAIRN_SETTINGS = 'defaults (zstd from node:zlib, skips incompressible data); parent = latest snapshot of the source; fresh cache directory (XDG_CACHE_HOME) per run';

function repositoryUrl(place: RepositoryPlace): string {
  if (!place.s3) return `file://${place.dir}`;
  const query = new URLSearchParams({ endpoint: place.s3.endpoint, region: place.s3.region, forcePathStyle: 'true' });
  return `s3://${place.s3.bucket}/${place.s3.prefix}?${query.toString()}`;
}

/** The JSON summary `repo backup -o json` prints: the whole stdout, or failing that its last JSON line. */
export function parseJsonSummary(stdout: string): Record<string, unknown> | undefined {
  const attempt = (text: string): Record<string, unknown> | undefined => {
    try {
      const value: unknown = JSON.parse(text);
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  const whole = attempt(stdout.trim());
  if (whole) return whole;
  const lines = stdout.trim().split('\n').filter((line) => line.startsWith('{'));
  return lines.length > 0 ? attempt(lines[lines.length - 1]!) : undefined;
}

/** A files-done count from a progress or log line, if cairn prints one (`doneFiles` in its progress events). */
function parseProgress(line: string): number | undefined {
  const match = /"?doneFiles"?\s*[:=]\s*(\d+)/.exec(line);
  return match ? Number(match[1]) : undefined;
}

/** cairn from `projectRoot` (its bin/run.js and dist/); `name` tells this checkout from a --baseline one. */
export function cairnTool(projectRoot: string, name: 'cairn' | 'cairn-before' = 'cairn'): BackupTool {
  const runJs = join(projectRoot, 'bin', 'run.js');
  const commandsBuilt = ['init', 'backup', 'restore'].every((verb) =>
    existsSync(join(projectRoot, 'dist', 'commands', 'repo', `${verb}.js`)),
  );
  return {
    name,
    async probe(): Promise<Availability> {
      if (!commandsBuilt) {
        const hasSource = existsSync(join(projectRoot, 'src', 'commands', 'repo', 'backup.ts'));
        return {
          available: false,
          reason: hasSource ? 'dist/commands/repo missing: run `npm run build` first' : '`cairn repo` commands not written yet',
        };
      }
      const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version?: string };
      const at = name === 'cairn' ? '' : ` at ${projectRoot}${gitHead(projectRoot)}`;
      return { available: true, version: `cairn ${pkg.version ?? '?'}${at}`, settings: CAIRN_SETTINGS };
    },
    open(place: RepositoryPlace): ToolSession {
      // cairn's local cache (the listing cache) lives in the run's directory, as restic's and kopia's do: kept from
      // one step to the next, new for each run.
      const env = baseEnv({ CAIRN_REPO_PASSWORD: BENCH_PASSWORD, XDG_CACHE_HOME: join(place.workDir, 'cairn-cache'), ...s3Credentials(place) });
      const repo = repositoryUrl(place);
      const measure = (args: string[], onLine?: (line: string) => number | undefined) =>
        measureCommand({ command: process.execPath, args: [runJs, 'repo', ...args], env, serverPid: place.serverPid, onLine });
      return {
        async init() {
          return ensureSucceeded('cairn', 'repo init', await measure(['init', '--repo', repo]));
        },
        async backup(source, backupOptions) {
          // Off a terminal cairn prints progress only as info log lines; ask for them only when they are needed.
          const progressArgs = backupOptions?.wantProgress ? ['--log-level', 'info', '--log-format', 'json'] : [];
          const measurement = ensureSucceeded(
            'cairn',
            'repo backup',
            await measure(['backup', source, '--repo', repo, '-o', 'json', ...progressArgs], parseProgress),
          );
          const summary = parseJsonSummary(measurement.stdout);
          const snapshotId = typeof summary?.snapshotId === 'string' ? summary.snapshotId : undefined;
          return { measurement, ...(snapshotId ? { snapshotId } : {}), ...(summary ? { summary } : {}) };
        },
        async restore(source, target) {
          const measurement = ensureSucceeded(
            'cairn',
            'repo restore',
            await measure(['restore', 'latest', target, '--repo', repo, '-o', 'json']),
          );
          // The contract restores the snapshot's contents into the target; accept a copy nested under the source's
          // absolute path too, as restic does.
          const nested = join(target, source);
          return { measurement, restoredRoot: existsSync(nested) ? nested : target };
        },
      };
    },
  };
}

/** " (commit abc1234)" for a git checkout, else "". */
function gitHead(dir: string): string {
  try {
    return ` (commit ${execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()})`;
  } catch {
    return '';
  }
}
