/**
 * Runs the built cairn CLI (bin/run.js on the bundled Node 24) as a user would, against the local cluster.
 * Needs `npm run build` (npm test builds first).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

export interface CliResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface CliOptions {
  kubeconfig?: string;
  env?: Record<string, string>;
  input?: string;
  timeoutMs?: number;
}

export function cairn(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const fullArgs = [RUN_JS, ...args, ...(opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, fullArgs, {
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 300_000,
      env: { ...process.env, CI: '1', ...opts.env },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), exitCode: code ?? 128 }),
    );
    // A program that exits without reading its input makes this write fail with EPIPE; its exit code and stderr
    // already say what happened, so the write error is not a second failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * Waits until `backup-location get NAME` (run through `run`, which names the server's namespace) shows the
 * location Available: the server has validated it, so backups to it can start.
 */
export async function locationAvailable(run: (args: string[]) => Promise<CliResult>, name = 'default', timeoutMs = 120_000): Promise<void> {
  await waitFor(
    async () => (JSON.parse((await run(['backup-location', 'get', name, '-o', 'json'])).stdout) as { status?: { phase?: string } }).status?.phase === 'Available',
    { timeoutMs, intervalMs: 1000, description: `backup location ${name} Available` },
  );
}
