/**
 * The local cluster's binaries: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and
 * MinIO, built from the Go module proxy at the versions pinned in tools/local-cluster/go/<group>/go.mod and
 * cached as ~/.cache/cairn/bin/<name>-<version>, so only the first run on a machine pays for the build. Each
 * group is one `go build` of several packages, so they share one build cache and one link step per binary.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { withFileLock } from './lock.js';
import { cacheRoot, repoRoot } from './paths.js';

export interface BinaryPaths {
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubectl: string;
  kubelet: string;
  kubeProxy: string;
  etcd: string;
  minio: string;
  registry: string;
}

/** The real nodes' container runtime, built only when a cluster with `--runtime containerd` is asked for. */
export interface NodeBinaryPaths {
  containerd: string;
  containerdShim: string;
  ctr: string;
}

/**
 * Binaries of the 'tool' groups, each built the first time a test or script asks for it (ensureToolBinary): helm,
 * the Velero plugins the plugin tests run unchanged, the test bed's own Go plugins, and promtool (which checks the
 * /metrics output).
 */
export interface ToolBinaryPaths {
  helm: string;
  veleroPluginForAws: string;
  veleroPluginForGcp: string;
  cairnTestPlugins: string;
  promtool: string;
}

/** The CSI test-bed binaries, built only when a cluster with CSI is asked for (see tools/local-cluster/csi/). */
export interface CsiBinaryPaths {
  csiProvisioner: string;
  csiSnapshotter: string;
  snapshotController: string;
}

interface BuildGroup {
  /** Folder under tools/local-cluster/go holding the go.mod that pins this group. */
  dir: string;
  /** The module whose pinned version names the binaries. */
  module: string;
  binaries: { key: keyof BinaryPaths | keyof CsiBinaryPaths | keyof NodeBinaryPaths | keyof ToolBinaryPaths; name: string; pkg: string }[];
  /**
   * Optional feature the group belongs to: built only when that feature is asked for (setupToolchain's options),
   * or on its own through ensureToolBinary(). 'tool' groups serve single tests and scripts (helm, Velero plugins...).
   */
  feature?: Feature;
  /**
   * The group's folder is itself the module built (the test bed's own Go code): its binaries are named by a hash of
   * the folder's files instead of a pinned version, so an edit builds them again.
   */
  source?: boolean;
  /** Extra -X linker flags for the version variables the upstream release build stamps. */
  versionFlags?: (version: string) => string[];
  /** Build tags (`go build -tags`). */
  tags?: string[];
  /** Extra environment for the build (CGO_ENABLED...). */
  env?: Record<string, string>;
}

type Feature = 'csi' | 'nodes' | 'tool';

/**
 * Kubernetes reads its own version from variables its release build sets with -X; without them every binary
 * (and the API server's /version) says v0.0.0-master, which clients doing version checks reject.
 */
function kubernetesVersionFlags(version: string): string[] {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  const vars = { gitVersion: version, gitMajor: m?.[1] ?? '', gitMinor: m?.[2] ?? '', gitTreeState: 'clean' };
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) =>
    Object.entries(vars).map(([k, v]) => `-X ${pkg}.${k}=${v}`));
}

const GROUPS: BuildGroup[] = [
  {
    dir: 'k8s',
    module: 'k8s.io/kubernetes',
    binaries: [
      { key: 'kubeApiserver', name: 'kube-apiserver', pkg: 'k8s.io/kubernetes/cmd/kube-apiserver' },
      { key: 'kubeControllerManager', name: 'kube-controller-manager', pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager' },
      { key: 'kubeScheduler', name: 'kube-scheduler', pkg: 'k8s.io/kubernetes/cmd/kube-scheduler' },
      { key: 'kubectl', name: 'kubectl', pkg: 'k8s.io/kubernetes/cmd/kubectl' },
      // The real nodes' agents: built with the control plane, they share most of its packages.
      { key: 'kubelet', name: 'kubelet', pkg: 'k8s.io/kubernetes/cmd/kubelet' },
      { key: 'kubeProxy', name: 'kube-proxy', pkg: 'k8s.io/kubernetes/cmd/kube-proxy' },
    ],
    versionFlags: kubernetesVersionFlags,
  },
  {
    dir: 'etcd',
    module: 'go.etcd.io/etcd/server/v3',
    binaries: [{ key: 'etcd', name: 'etcd', pkg: 'go.etcd.io/etcd/server/v3' }],
  },
  {
    dir: 'minio',
    module: 'github.com/minio/minio',
    binaries: [{ key: 'minio', name: 'minio', pkg: 'github.com/minio/minio' }],
  },
  {
    dir: 'registry',
    module: 'github.com/distribution/distribution/v3',
    binaries: [{ key: 'registry', name: 'registry', pkg: 'github.com/distribution/distribution/v3/cmd/registry' }],
  },
  {
    dir: 'containerd',
    module: 'github.com/containerd/containerd/v2',
    feature: 'nodes',
    binaries: [
      { key: 'containerd', name: 'containerd', pkg: 'github.com/containerd/containerd/v2/cmd/containerd' },
      { key: 'containerdShim', name: 'containerd-shim-runc-v2', pkg: 'github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2' },
      { key: 'ctr', name: 'ctr', pkg: 'github.com/containerd/containerd/v2/cmd/ctr' },
    ],
    // The snapshotters that need C headers (btrfs) or a device-mapper pool are not used by the test bed; a static
    // build, as containerd's release build makes the shim.
    tags: ['no_btrfs', 'no_devmapper'],
    env: { CGO_ENABLED: '0' },
    // Stamped as the release build does (without the leading v): nodes report `containerd://2.x.y`.
    versionFlags: (version) => [`-X github.com/containerd/containerd/v2/version.Version=${version.replace(/^v/, '')}`],
  },
  {
    dir: 'csi-provisioner',
    module: 'github.com/kubernetes-csi/external-provisioner/v6',
    feature: 'csi',
    binaries: [{ key: 'csiProvisioner', name: 'csi-provisioner', pkg: 'github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner' }],
  },
  {
    dir: 'csi-snapshotter',
    module: 'github.com/kubernetes-csi/external-snapshotter/v8',
    feature: 'csi',
    binaries: [
      { key: 'csiSnapshotter', name: 'csi-snapshotter', pkg: 'github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter' },
      { key: 'snapshotController', name: 'snapshot-controller', pkg: 'github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller' },
    ],
  },
  {
    dir: 'helm',
    module: 'helm.sh/helm/v4',
    feature: 'tool',
    binaries: [{ key: 'helm', name: 'helm', pkg: 'helm.sh/helm/v4/cmd/helm' }],
    // `helm version` prints this; the release build sets it the same way.
    versionFlags: (version) => [`-X helm.sh/helm/v4/internal/version.version=${version}`],
  },
  {
    dir: 'promtool',
    module: 'github.com/prometheus/prometheus',
    feature: 'tool',
    binaries: [{ key: 'promtool', name: 'promtool', pkg: 'github.com/prometheus/prometheus/cmd/promtool' }],
    env: { CGO_ENABLED: '0' },
  },
  {
    dir: 'velero-plugin-for-aws',
    module: 'github.com/vmware-tanzu/velero-plugin-for-aws',
    feature: 'tool',
    binaries: [{ key: 'veleroPluginForAws', name: 'velero-plugin-for-aws', pkg: 'github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws' }],
    // Velero's plugin images are built with CGO off.
    env: { CGO_ENABLED: '0' },
  },
  {
    dir: 'velero-plugin-for-gcp',
    module: 'github.com/vmware-tanzu/velero-plugin-for-gcp',
    feature: 'tool',
    binaries: [{ key: 'veleroPluginForGcp', name: 'velero-plugin-for-gcp', pkg: 'github.com/vmware-tanzu/velero-plugin-for-gcp/velero-plugin-for-gcp' }],
    env: { CGO_ENABLED: '0' },
  },
  {
    dir: 'test-plugins',
    module: 'cairn.local/test-bed/test-plugins',
    feature: 'tool',
    source: true,
    binaries: [{ key: 'cairnTestPlugins', name: 'cairn-test-plugins', pkg: 'cairn.local/test-bed/test-plugins' }],
    env: { CGO_ENABLED: '0' },
  },
];

/** Minimum Go the pinned modules declare (`go 1.26.0` in their go.mod files). */
const MIN_GO = [1, 26] as const;

export function binDir(): string {
  return join(cacheRoot(), 'bin');
}

/** Version of `module` as required by the group's go.mod; a pseudo-version is shortened to date-commit. */
function pinnedVersion(group: BuildGroup): string {
  if (group.source) return sourceVersion(group);
  const goMod = readFileSync(join(repoRoot(), 'tools/local-cluster/go', group.dir, 'go.mod'), 'utf8');
  const escaped = group.module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const m = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(\\S+)`, 'm').exec(goMod);
  if (!m?.[1]) throw new Error(`tools/local-cluster/go/${group.dir}/go.mod does not require ${group.module}`);
  const pseudo = /^v0\.0\.0-(\d{8})\d{6}-([0-9a-f]{8})[0-9a-f]*$/.exec(m[1]);
  return pseudo ? `${pseudo[1]}-${pseudo[2]}` : m[1];
}

/** `src-` and the first 12 hex digits of a SHA-256 over the group folder's files (names and contents, sorted). */
function sourceVersion(group: BuildGroup): string {
  const dir = join(repoRoot(), 'tools/local-cluster/go', group.dir);
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    hash.update(name).update('\0').update(readFileSync(join(dir, name))).update('\0');
  }
  return `src-${hash.digest('hex').slice(0, 12)}`;
}

function binaryPath(group: BuildGroup, name: string): string {
  return join(binDir(), `${name}-${pinnedVersion(group)}`);
}

function groupPaths(feature: Feature | undefined, hint: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const g of GROUPS.filter((x) => x.feature === feature)) {
    for (const b of g.binaries) {
      const p = binaryPath(g, b.name);
      if (!existsSync(p)) throw new Error(`${p} is missing: run 'node --import tsx tools/local-cluster/cli.ts ${hint}'`);
      out[b.key] = p;
    }
  }
  return out;
}

/** Paths of the cached binaries; throws if setup has not built them yet. */
export function binaryPaths(): BinaryPaths {
  return groupPaths(undefined, 'setup') as unknown as BinaryPaths;
}

/** Paths of the cached container runtime binaries; throws if `setup --runtime containerd` has not built them yet. */
export function nodeBinaryPaths(): NodeBinaryPaths {
  return groupPaths('nodes', 'setup --runtime containerd') as unknown as NodeBinaryPaths;
}

/** Paths of the cached CSI binaries; throws if `setup --csi` has not built them yet. */
export function csiBinaryPaths(): CsiBinaryPaths {
  return groupPaths('csi', 'setup --csi') as unknown as CsiBinaryPaths;
}

/** The module folder of `module` at the version the CSI groups' go.mod pins, downloaded into the module cache. */
export async function csiModuleDir(module: string, log: (line: string) => void): Promise<string> {
  return moduleDir('csi-snapshotter', module, log);
}

/** The module folder of `module` at the version group `dir`'s go.mod pins, downloaded into the module cache. */
export async function moduleDir(dir: string, module: string, log: (line: string) => void): Promise<string> {
  const go = await findGo(log);
  const out = execFileSync(go, ['mod', 'download', '-json', module], {
    cwd: join(repoRoot(), 'tools/local-cluster/go', dir),
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
  });
  const found = (JSON.parse(out) as { Dir?: string }).Dir;
  if (!found) throw new Error(`go mod download ${module} gave no directory`);
  return found;
}

/**
 * The binary `key` of a 'tool' group, built (under that group's own lock) the first time it is asked for: a test
 * that needs helm builds helm, a plugin test its plugins, and nothing else waits for them.
 */
export async function ensureToolBinary(key: keyof ToolBinaryPaths, log: (line: string) => void): Promise<string> {
  const group = GROUPS.find((g) => g.binaries.some((b) => b.key === key));
  if (!group) throw new Error(`no build group provides ${key}`);
  const binary = group.binaries.find((b) => b.key === key)!;
  const path = binaryPath(group, binary.name);
  if (existsSync(path)) return path;
  mkdirSync(binDir(), { recursive: true });
  await ensureGroup(group, await findGo(log), log);
  return path;
}

/** The cached binary of a 'tool' group, or undefined when it has not been built yet (no build started). */
export function toolBinaryPath(key: keyof ToolBinaryPaths): string | undefined {
  const group = GROUPS.find((g) => g.binaries.some((b) => b.key === key));
  const binary = group?.binaries.find((b) => b.key === key);
  if (!group || !binary) return undefined;
  const path = binaryPath(group, binary.name);
  return existsSync(path) ? path : undefined;
}

export interface SetupResult {
  paths: BinaryPaths;
  /** Per group: seconds spent building, or 'cached'. */
  timings: { group: string; version: string; seconds: number | 'cached' }[];
}

export interface SetupOptions {
  /** Also build the CSI test-bed binaries (csi-provisioner, csi-snapshotter, snapshot-controller). */
  csi?: boolean;
  /** Also build the real nodes' container runtime (containerd, its runc shim, ctr). */
  nodes?: boolean;
  /** Also build the tools single tests use (helm, plugins...), which otherwise build when first asked for. */
  tools?: boolean;
}

export async function setupToolchain(log: (line: string) => void, opts: SetupOptions = {}): Promise<SetupResult> {
  mkdirSync(binDir(), { recursive: true });
  const wanted = GROUPS.filter(
    (g) => !g.feature || (g.feature === 'csi' && opts.csi) || (g.feature === 'nodes' && opts.nodes) || (g.feature === 'tool' && opts.tools),
  );
  const missingAny = wanted.some((g) => g.binaries.some((b) => !existsSync(binaryPath(g, b.name))));
  const go = missingAny ? await findGo(log) : undefined;
  // The groups build at the same time: one group's serial link steps and downloads overlap the others' compiles.
  // Each group has its own lock, so a command that needs only some groups never waits on another's build.
  const results = await Promise.allSettled(wanted.map((g) => ensureGroup(g, go, log)));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const timings = results.map((r) => (r as PromiseFulfilledResult<SetupResult['timings'][number]>).value);
  return { paths: binaryPaths(), timings };
}

async function ensureGroup(g: BuildGroup, go: string | undefined, log: (line: string) => void): Promise<SetupResult['timings'][number]> {
  const version = pinnedVersion(g);
  const missing = () => g.binaries.filter((b) => !existsSync(binaryPath(g, b.name)));
  if (missing().length === 0 || !go) return { group: g.dir, version, seconds: 'cached' };
  return withFileLock(
    {
      path: join(binDir(), `.setup-${g.dir}.lock`),
      timeoutMs: 90 * 60_000,
      onWait: (pid) => log(`another setup (pid ${pid}) is building ${g.dir}; waiting for it`),
    },
    async () => {
      // Built by the process we waited for: nothing left to do.
      const todo = missing();
      if (todo.length === 0) return { group: g.dir, version, seconds: 'cached' as const };
      log(`building ${todo.map((b) => b.name).join(', ')} ${version} with ${go} (first run only; minutes)`);
      const started = Date.now();
      await buildGroup(g, todo, go);
      const seconds = Math.round((Date.now() - started) / 1000);
      log(`built ${g.dir} ${version} in ${seconds}s`);
      return { group: g.dir, version, seconds };
    },
  );
}

async function buildGroup(g: BuildGroup, binaries: BuildGroup['binaries'], go: string): Promise<void> {
  // Build into a private folder, then rename into place: a reader never sees a half-written binary.
  const out = join(binDir(), `.build-${g.dir}-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const ldflags = ['-s', '-w', ...(g.versionFlags?.(pinnedVersion(g)) ?? [])].join(' ');
  const args = ['build', '-trimpath', `-ldflags=${ldflags}`, ...(g.tags ? [`-tags=${g.tags.join(',')}`] : []), '-o', binaries.length > 1 ? `${out}/` : join(out, binaries[0]!.name)];
  args.push(...binaries.map((b) => b.pkg));
  const env = {
    ...process.env,
    // go.mod and go.sum are committed and complete: a build must neither change them nor resolve anything else.
    GOFLAGS: '-mod=readonly -buildvcs=false',
    GOTOOLCHAIN: 'local',
    ...g.env,
  };
  try {
    await run(go, args, { cwd: join(repoRoot(), 'tools/local-cluster/go', g.dir), env });
    for (const b of binaries) {
      const built = join(out, b.name);
      chmodSync(built, 0o755);
      renameSync(built, binaryPath(g, b.name));
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.slice(0, 2).join(' ')} ... failed (${signal ?? `exit ${code}`}) in ${opts.cwd}`));
    });
  });
}

/** Go release fetched when the machine has no suitable go (the go command's own toolchain download path). */
const FALLBACK_GO = 'go1.26.8';

/**
 * The go command to build with: $GO, `go` on PATH or /usr/local/go/bin/go if new enough; otherwise the Go
 * toolchain from the Go module proxy (golang.org/toolchain), unpacked once under ~/.cache/cairn/go/.
 */
async function findGo(log: (line: string) => void): Promise<string> {
  const candidates = [process.env.GO, 'go', '/usr/local/go/bin/go', fallbackGoPath()].filter((c): c is string => Boolean(c));
  for (const c of candidates) {
    if (isRecentGo(c)) return c;
  }
  await downloadGo(log);
  const go = fallbackGoPath();
  if (!isRecentGo(go)) throw new Error(`the downloaded Go toolchain at ${go} does not run`);
  return go;
}

function isRecentGo(cmd: string): boolean {
  let version: string;
  try {
    version = execFileSync(cmd, ['env', 'GOVERSION'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } }).trim();
  } catch {
    return false;
  }
  const m = /^go(\d+)\.(\d+)/.exec(version);
  return Boolean(m && (Number(m[1]) > MIN_GO[0] || (Number(m[1]) === MIN_GO[0] && Number(m[2]) >= MIN_GO[1])));
}

function toolchainModuleVersion(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return `v0.0.1-${FALLBACK_GO}.${process.platform}-${arch}`;
}

export function fallbackGoPath(): string {
  return join(cacheRoot(), 'go', 'toolchain', `golang.org/toolchain@${toolchainModuleVersion()}`, 'bin', 'go');
}

export async function downloadGo(log: (line: string) => void): Promise<void> {
  const proxy = (process.env.GOPROXY ?? 'https://proxy.golang.org').split(/[,|]/)[0]!.replace(/\/$/, '');
  const url = `${proxy}/golang.org/toolchain/@v/${toolchainModuleVersion()}.zip`;
  log(`no Go ${MIN_GO.join('.')}+ found: downloading ${FALLBACK_GO} from ${url}`);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}; install Go ${MIN_GO.join('.')}+ or set $GO`);
  const dir = join(cacheRoot(), 'go', 'toolchain');
  mkdirSync(dir, { recursive: true });
  const zip = join(dir, `.download-${process.pid}.zip`);
  writeFileSync(zip, Buffer.from(await res.arrayBuffer()));
  try {
    execFileSync('unzip', ['-q', '-o', zip, '-d', dir], { stdio: 'inherit' });
  } finally {
    rmSync(zip, { force: true });
  }
  // Module zips carry no file modes: make the commands and tools executable, as the go command does.
  const root = dirname(dirname(fallbackGoPath()));
  for (const sub of ['bin', 'pkg/tool']) {
    const base = join(root, sub);
    if (!existsSync(base)) continue;
    for (const entry of readdirSync(base, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) chmodSync(join(entry.parentPath, entry.name), 0o755);
    }
  }
}
