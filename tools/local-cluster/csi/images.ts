/**
 * The CSI stack's images for real nodes, made here and pushed to the cluster's registry under the names the
 * manifests use (registry.k8s.io/sig-storage/... maps to sig-storage/... in the test bed's registry):
 *
 * - `hostpathplugin:cairn-local`: the test bed's host-path driver (driver/main.ts bundled into one file with
 *   esbuild) on this machine's Node.js, with csi.proto and the kubelet's pluginregistration api.proto, and the
 *   mount, umount, losetup and cp it runs (each with the libraries it links);
 * - `csi-provisioner`, `csi-snapshotter`, `snapshot-controller`: the binaries `setup --csi` built, with their
 *   libraries.
 *
 * Layouts are cached under ~/.cache/cairn/images/ by the digest of what goes in.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { hostBinaryEntries } from '../images/host-binaries.js';
import { writeImageLayout, type ImageConfig, type LayerEntry } from '../images/oci-layout.js';
import type { TestImage } from '../images/test-images.js';
import { cacheRoot, repoRoot } from '../paths.js';
import { csiBinaryPaths, csiModuleDir, moduleDir } from '../toolchain.js';

/** Where the driver image keeps its protocol files. */
export const DRIVER_CSI_PROTO = '/driver/csi.proto';
export const DRIVER_REGISTRATION_PROTO = '/driver/registration.proto';

const SPEC_MODULE = 'github.com/container-storage-interface/spec';

/** Programs the driver runs, from this machine. */
const DRIVER_TOOLS = ['/usr/bin/mount', '/usr/bin/umount', '/usr/sbin/losetup', '/usr/bin/cp'];

const fileKey = (path: string) => {
  const s = statSync(path);
  return `${path}:${s.size}:${s.mtimeMs}`;
};

async function cachedLayout(name: string, key: string, make: () => Promise<{ entries: LayerEntry[]; config: ImageConfig }>): Promise<string> {
  const dir = join(cacheRoot(), 'images', `${name}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`);
  if (existsSync(join(dir, 'index.json'))) return dir;
  const { entries, config } = await make();
  await writeImageLayout(dir, entries, config, { gzipLevel: 1 });
  return dir;
}

async function driverImage(log: (line: string) => void): Promise<TestImage> {
  const csiProto = join(await csiModuleDir(SPEC_MODULE, log), 'csi.proto');
  const registrationProto = join(await moduleDir('k8s', 'k8s.io/kubelet', log), 'pkg/apis/pluginregistration/v1/api.proto');
  const work = mkdtempSync(join(tmpdir(), 'cairn-csi-driver-'));
  try {
    const bundle = join(work, 'main.cjs');
    await build({
      entryPoints: [join(repoRoot(), 'tools/local-cluster/csi/driver/main.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node24',
      outfile: bundle,
      logLevel: 'warning',
    });
    const code = readFileSync(bundle);
    const key = [code.toString('base64'), readFileSync(csiProto, 'utf8'), readFileSync(registrationProto, 'utf8'),
      ...[process.execPath, ...DRIVER_TOOLS].map(fileKey)].join('\n');
    const layoutDir = await cachedLayout('hostpathplugin', key, async () => ({
      entries: [
        ...(await hostBinaryEntries({ [process.execPath]: '/usr/local/bin/node', ...Object.fromEntries(DRIVER_TOOLS.map((t) => [t, t])) })),
        { type: 'file', path: '/driver/main.cjs', mode: 0o644, content: code },
        { type: 'file', path: DRIVER_CSI_PROTO, mode: 0o644, content: readFileSync(csiProto) },
        { type: 'file', path: DRIVER_REGISTRATION_PROTO, mode: 0o644, content: readFileSync(registrationProto) },
        { type: 'directory', path: 'tmp', mode: 0o1777 },
      ],
      config: { entrypoint: ['/usr/local/bin/node', '/driver/main.cjs'] },
    }));
    return { names: [{ repository: 'sig-storage/hostpathplugin', tag: 'cairn-local' }], layoutDir };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function binaryImage(repository: string, tag: string, binary: string): Promise<TestImage> {
  const name = repository.split('/').pop()!;
  const layoutDir = await cachedLayout(name, fileKey(binary), async () => ({
    entries: [...(await hostBinaryEntries({ [binary]: `/${name}` })), { type: 'directory', path: 'tmp', mode: 0o1777 }],
    config: { entrypoint: [`/${name}`] },
  }));
  return { names: [{ repository, tag }], layoutDir };
}

/** Builds (or takes from the cache) the four images of the CSI stack. */
export async function csiImages(log: (line: string) => void): Promise<TestImage[]> {
  const bin = csiBinaryPaths();
  return [
    await driverImage(log),
    await binaryImage('sig-storage/csi-provisioner', 'v6.3.0', bin.csiProvisioner),
    await binaryImage('sig-storage/csi-snapshotter', 'v8.7.0', bin.csiSnapshotter),
    await binaryImage('sig-storage/snapshot-controller', 'v8.7.0', bin.snapshotController),
  ];
}
