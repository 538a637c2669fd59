/**
 * The README's first run on a machine whose cache is empty: `cluster:up` and `npm run demo`, both on real nodes (their
 * default), with a scratch cache root (CAIRN_CACHE_DIR) that holds nothing but the toolchain and buildah's layer store,
 * taken from the real cache so the test does not build Kubernetes and the image's npm layer again. Nothing else may
 * be assumed to exist: no run directory, no previous cluster, no test-bed image, no image archive. The clusters are
 * the test's own (the e2e tier's cluster is not used).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheRoot } from '../../tools/local-cluster/paths.js';

let scratch: string;

interface Run {
  exitCode: number;
  output: string;
  seconds: number;
}

function runScript(args: string[], timeoutMs: number): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      env: { ...process.env, CAIRN_CACHE_DIR: scratch, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ exitCode: code ?? 128, output, seconds: (Date.now() - started) / 1000 }));
  });
}

beforeAll(() => {
  // Beside the real cache rather than under /tmp: with the kubelet stand-in (`--runtime local`) pods run as host
  // processes, and the server pod mounts an emptyDir over /tmp, which would hide a node root kept under /tmp.
  scratch = mkdtempSync(join(dirname(cacheRoot()), 'cairn-fresh-cache-'));
  // The built toolchain, the Debian packages and buildah's store (its cached layers), as a machine has them after
  // its first build; nothing else.
  for (const dir of ['bin', 'debian', 'containers']) {
    if (existsSync(join(cacheRoot(), dir))) symlinkSync(join(cacheRoot(), dir), join(scratch, dir));
  }
});

afterAll(async () => {
  // Whatever a failed run left: stop it, then remove the scratch root.
  if (existsSync(join(scratch, 'run'))) {
    for (const name of readdirSync(join(scratch, 'run'))) {
      if (name.endsWith('.lock')) continue;
      await runScript(['tools/local-cluster/cli.ts', 'down', '--run-dir', join(scratch, 'run', name)], 120_000);
    }
  }
  rmSync(scratch, { recursive: true, force: true });
}, 300_000);

describe('a first run with an empty cache', () => {
  it('cluster:up starts a cluster and cluster:down removes it', async () => {
    expect(existsSync(join(scratch, 'run'))).toBe(false);
    const up = await runScript(['tools/local-cluster/cli.ts', 'up', '--name', 'fresh', '--nodes', '1'], 600_000);
    expect(up.exitCode, up.output).toBe(0);
    expect(up.output).toContain(`run dir:     ${join(scratch, 'run', 'fresh')}`);
    expect(up.output).toMatch(/\(kubelet \+ containerd\)/);
    expect(up.output).toMatch(/ready in: +\d+\.\d s/);
    process.stderr.write(`[fresh-cache] cluster:up (real nodes) on an empty cache: ${up.seconds.toFixed(1)} s; ${/ready in: +.*/.exec(up.output)?.[0] ?? ''}\n`);
    const status = await runScript(['tools/local-cluster/cli.ts', 'status', '--name', 'fresh'], 120_000);
    expect(status.exitCode, status.output).toBe(0);
    const down = await runScript(['tools/local-cluster/cli.ts', 'down', '--name', 'fresh'], 300_000);
    expect(down.exitCode, down.output).toBe(0);
    expect(existsSync(join(scratch, 'run', 'fresh'))).toBe(false);
  }, 900_000);

  it('npm run demo completes: the sample application and its volume come back', async () => {
    rmSync(join(scratch, 'run'), { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    const demo = await runScript(['scripts/demo.ts'], 1_200_000);
    process.stderr.write(`[fresh-cache] demo (real nodes) on an empty cache: ${demo.seconds.toFixed(1)} s\n`);
    expect(demo.exitCode, demo.output.slice(-6000)).toBe(0);
    // Installed from the image it built and pushed into the cluster's registry, not the stand-in's mapping.
    expect(demo.output).toMatch(/--image [\d.]+:\d+\/cairn-backup\/cairn:dev-[0-9a-f]{12} --kubelet-root-dir \/var\/lib\/k8s\/kubelet/);
    expect(demo.output).toMatch(/every file on the volume is back, byte for byte \(\d+ files\)/);
    expect(demo.output).toContain('cluster stopped');
  }, 1_500_000);
});
