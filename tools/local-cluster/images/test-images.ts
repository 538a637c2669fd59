/**
 * The test bed's own images, made here from sources that are already on the machine and pushed to each cluster's
 * registry by `cluster:up` (real nodes pull everything from there):
 *
 * - `registry.k8s.io/pause:3.10` (the sandbox image): Kubernetes' own build/pause/linux/pause.c, taken from the
 *   pinned k8s.io/kubernetes module in the Go module cache and compiled statically with the machine's C compiler;
 * - `busybox` (tags `latest`, `1.35`, `1.36`; also `docker.io/library/busybox`): Debian's busybox-static with a
 *   link per applet, /etc/passwd and /etc/group (root, nobody) and a sticky /tmp, for the sample workloads;
 * - `redis:7.0` (a real workload: a database that the backup tests load, back up while it runs and check after a
 *   restore): busybox as above plus Debian's redis-server and redis-cli with the libraries they link;
 * - Velero plugin images (`velero/velero-plugin-for-aws:<v>`...), made as Velero's are: the plugin binary (built
 *   from the Go module proxy by the toolchain) at /plugins/<name> and an entrypoint copying it into /target, where
 *   cairn's install mounts the server's and node agent's plugins volume; pushed by the tests that install them.
 *
 * Each is a single-layer OCI layout (oci-layout.ts) cached under ~/.cache/cairn/images/<name>-<key>/, built once per
 * machine (a second or two) and keyed by its inputs.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { debianTools } from '../debian.js';
import { withFileLock } from '../lock.js';
import { cacheRoot } from '../paths.js';
import { pushImageLayout } from '../registry-push.js';
import { moduleDir } from '../toolchain.js';
import { hostBinaryEntries } from './host-binaries.js';
import { hostFile, writeImageLayout, type LayerEntry } from './oci-layout.js';

const exec = promisify(execFile);

export interface TestImage {
  /** Repositories and tags in the test bed's registry (the path an image name maps to, see node-config.ts). */
  names: { repository: string; tag: string }[];
  layoutDir: string;
}

const imagesDir = () => join(cacheRoot(), 'images');

const ETC_PASSWD = 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n';
const ETC_GROUP = 'root:x:0:\nnogroup:x:65534:\n';

function key(...parts: (string | Buffer)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex').slice(0, 12);
}

/** Builds (once) and returns the pause image. */
export async function pauseImage(log: (line: string) => void): Promise<TestImage> {
  const source = join(await moduleDir('k8s', 'k8s.io/kubernetes', log), 'build/pause/linux/pause.c');
  const text = readFileSync(source);
  const layoutDir = join(imagesDir(), `pause-${key(text)}`);
  const names = [{ repository: 'pause', tag: '3.10' }];
  if (existsSync(join(layoutDir, 'index.json'))) return { names, layoutDir };
  const work = mkdtempSync(join(tmpdir(), 'cairn-pause-'));
  try {
    const binary = join(work, 'pause');
    await exec('cc', ['-Os', '-static', '-s', '-DVERSION=v3.10-cairn', '-o', binary, source]);
    await writeImageLayout(layoutDir, [hostFile('pause', binary)], { entrypoint: ['/pause'], user: '65535:65535' });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  log(`built the pause image from ${source}`);
  return { names, layoutDir };
}

/** busybox-static with a link per applet and the few files a shell image needs; its content for cache keys. */
async function busyboxEntries(log: (line: string) => void): Promise<{ entries: LayerEntry[]; content: Buffer; path: string }> {
  const debian = await debianTools(['busybox-static'], log);
  const busybox = debian.bin('busybox');
  const content = readFileSync(busybox);
  const applets = (await exec(busybox, ['--list'])).stdout.split('\n').filter((a) => a && a !== 'busybox');
  const entries: LayerEntry[] = [
    { type: 'file', path: 'bin/busybox', mode: 0o755, content },
    ...applets.map((a): LayerEntry => ({ type: 'symlink', path: `bin/${a}`, target: 'busybox' })),
    { type: 'file', path: 'etc/passwd', mode: 0o644, content: Buffer.from(ETC_PASSWD) },
    { type: 'file', path: 'etc/group', mode: 0o644, content: Buffer.from(ETC_GROUP) },
    { type: 'directory', path: 'tmp', mode: 0o1777 },
    { type: 'directory', path: 'root', mode: 0o700 },
  ];
  return { entries, content, path: busybox };
}

/** Builds (once) and returns the busybox image. */
export async function busyboxImage(log: (line: string) => void): Promise<TestImage> {
  const busybox = await busyboxEntries(log);
  const layoutDir = join(imagesDir(), `busybox-${key(busybox.content, ETC_PASSWD, ETC_GROUP)}`);
  const names = ['latest', '1.35', '1.36'].flatMap((tag) => [{ repository: 'library/busybox', tag }, { repository: 'busybox', tag }]);
  if (existsSync(join(layoutDir, 'index.json'))) return { names, layoutDir };
  await writeImageLayout(layoutDir, busybox.entries, { cmd: ['sh'] });
  log(`built the busybox image from ${busybox.path}`);
  return { names, layoutDir };
}

/** Builds (once) and returns the Redis image: `redis-server` with its data in /data, `redis-cli` beside it. */
export async function redisImage(log: (line: string) => void): Promise<TestImage> {
  const busybox = await busyboxEntries(log);
  const debian = await debianTools(['redis-server'], log);
  const server = debian.bin('redis-server');
  const cli = debian.bin('redis-cli');
  const layoutDir = join(imagesDir(), `redis-${key(busybox.content, readFileSync(server), readFileSync(cli))}`);
  const names = [{ repository: 'library/redis', tag: '7.0' }, { repository: 'redis', tag: '7.0' }];
  if (existsSync(join(layoutDir, 'index.json'))) return { names, layoutDir };
  // redis-server is Debian's link to redis-check-rdb (one binary, told apart by its name): stored under the
  // server's name.
  const redis = await hostBinaryEntries({ [server]: '/usr/bin/redis-server', [cli]: '/usr/bin/redis-cli' },
    { env: debian.env(), stripPrefix: debian.prefix });
  await writeImageLayout(layoutDir, [...busybox.entries, ...redis, { type: 'directory', path: 'data', mode: 0o755 }], {
    cmd: ['redis-server', '--dir', '/data', '--appendonly', 'yes', '--protected-mode', 'no'],
    workingDir: '/data',
  });
  log(`built the redis image from ${server}`);
  return { names, layoutDir };
}

/** A Velero plugin image to make: its binary on this machine and the name the tests install it under. */
export interface PluginImageSpec {
  /** The plugin binary (a toolchain build). */
  binary: string;
  /** The file name under /plugins, as in Velero's image (`velero-plugin-for-aws`). */
  name: string;
  /** Repository and tag in the registry: `velero/velero-plugin-for-aws`, `v1.14.3`. */
  repository: string;
  tag: string;
}

/** Builds (once) a plugin image: busybox's `cp`, the binary with the libraries it links, `cp` as its entrypoint. */
export async function pluginImage(spec: PluginImageSpec, log: (line: string) => void): Promise<TestImage> {
  const busybox = await busyboxEntries(log);
  const names = [{ repository: spec.repository, tag: spec.tag }];
  const layoutDir = join(imagesDir(), `plugin-${spec.name}-${key(busybox.content, readFileSync(spec.binary))}`);
  if (existsSync(join(layoutDir, 'index.json'))) return { names, layoutDir };
  const plugin = await hostBinaryEntries({ [spec.binary]: `/plugins/${spec.name}` });
  await writeImageLayout(layoutDir, [...busybox.entries, ...plugin], {
    entrypoint: ['/bin/cp', `/plugins/${spec.name}`, `/target/${spec.name}`],
    user: '65532:65532',
  });
  log(`built the plugin image ${spec.repository}:${spec.tag} from ${spec.binary}`);
  return { names, layoutDir };
}

/** Builds what is missing and pushes these plugin images into a cluster's registry. */
export async function pushPluginImages(registryUrl: string, specs: readonly PluginImageSpec[], log: (line: string) => void): Promise<void> {
  mkdirSync(imagesDir(), { recursive: true });
  const images = await withFileLock({ path: join(imagesDir(), '.lock'), timeoutMs: 10 * 60_000 }, async () => {
    const built: TestImage[] = [];
    for (const spec of specs) built.push(await pluginImage(spec, log));
    return built;
  });
  for (const image of images) {
    for (const n of image.names) await pushImageLayout(image.layoutDir, { registryUrl, ...n });
  }
}

/** Builds what is missing (under a lock: parallel test runs build once) and pushes every test image. */
export async function pushTestImages(registryUrl: string, log: (line: string) => void): Promise<void> {
  mkdirSync(imagesDir(), { recursive: true });
  const images = await withFileLock({ path: join(imagesDir(), '.lock'), timeoutMs: 10 * 60_000 }, async () =>
    [await pauseImage(log), await busyboxImage(log), await redisImage(log)]);
  for (const image of images) {
    for (const n of image.names) await pushImageLayout(image.layoutDir, { registryUrl, ...n });
  }
}
