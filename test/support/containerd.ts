/**
 * A private containerd (Debian's containerd and runc, unpacked by the test bed) for tests that run cairn's image
 * under a real container runtime: its own root, state and socket in a temporary directory, stopped and removed by
 * `stop()`. Containers share the host's network, so a process inside reaches the test cluster on loopback.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { debianTools, type DebianTools } from '../../tools/local-cluster/debian.js';
import { waitFor } from './wait.js';

export interface CtrResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface Containerd {
  /** `ctr <args>` against this containerd. */
  ctr(args: string[], opts?: { allowFailure?: boolean; timeoutMs?: number }): Promise<CtrResult>;
  /** `ctr run` in the background (for servers); kill it with the returned process. */
  start(args: string[]): ChildProcess;
  stop(): Promise<void>;
}

export async function startContainerd(): Promise<Containerd> {
  const tools: DebianTools = await debianTools(['containerd', 'runc'], (l) => process.stderr.write(`[containerd] ${l}\n`));
  const dir = mkdtempSync(join(tmpdir(), 'cairn-containerd-'));
  const socket = join(dir, 'containerd.sock');
  const config = join(dir, 'config.toml');
  writeFileSync(config, [
    'version = 2',
    `root = "${join(dir, 'root')}"`,
    `state = "${join(dir, 'state')}"`,
    // The CRI plugin serves kubelets; these tests talk to containerd directly.
    'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
    '[grpc]',
    `  address = "${socket}"`,
    '',
  ].join('\n'));
  const env = tools.env();
  const daemon = spawn(tools.bin('containerd'), ['--config', config], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let daemonLog = '';
  daemon.stderr?.on('data', (d: Buffer) => (daemonLog = (daemonLog + d.toString()).slice(-8000)));
  await waitFor(() => existsSync(socket), { timeoutMs: 30_000, description: `containerd socket ${socket}` }).catch((err: unknown) => {
    daemon.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${daemonLog}`);
  });
  const ctrBin = tools.bin('ctr');
  const ctr = (args: string[], opts: { allowFailure?: boolean; timeoutMs?: number } = {}): Promise<CtrResult> =>
    new Promise((resolve, reject) => {
      const child = spawn(ctrBin, ['--address', socket, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
      child.on('error', reject);
      child.on('exit', (code) => {
        clearTimeout(timer);
        const result = { stdout, stderr, exitCode: code ?? -1 };
        if (code !== 0 && !opts.allowFailure) reject(new Error(`ctr ${args.join(' ')} exited ${code}: ${stderr}`));
        else resolve(result);
      });
    });
  return {
    ctr,
    start: (args) => spawn(ctrBin, ['--address', socket, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }),
    async stop() {
      const tasks = await ctr(['tasks', 'ls', '-q'], { allowFailure: true });
      for (const id of tasks.stdout.split('\n').filter(Boolean)) await ctr(['tasks', 'kill', '-s', 'SIGKILL', id], { allowFailure: true });
      daemon.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        if (daemon.exitCode !== null) resolve();
        else daemon.once('exit', () => resolve());
      });
      // Snapshots are overlay mounts under the root: unmount before removing (a lazy unmount tolerates busy ones).
      spawnSync('sh', ['-c', `grep -o "${dir}[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l`], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
