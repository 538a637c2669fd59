/**
 * Images map to programs on this machine (there is no container runtime). One table decides:
 * cairn's image runs the working tree's cairn with Node 24; a few workload images run the host's shell and
 * coreutils; Velero plugin images copy their plugin binary (built from the Go module proxy by the toolchain's
 * 'tool' groups) to /target, as their entrypoint does; anything else cannot be "pulled".
 */
import { join } from 'node:path';
import { csiBinaryPaths, toolBinaryPath, type CsiBinaryPaths, type ToolBinaryPaths } from '../toolchain.js';

export type ImageKind = 'cairn' | 'host-tools' | 'pause' | 'csi-hostpath-driver' | 'csi-binary' | 'velero-plugin';

/** Plugin images → the binary their entrypoint copies (`cp-plugin /plugins/<name> /target/<name>`). */
const PLUGIN_BINARIES: Readonly<Record<string, keyof ToolBinaryPaths>> = {
  'velero-plugin-for-aws': 'veleroPluginForAws',
  'velero-plugin-for-gcp': 'veleroPluginForGcp',
  'cairn-test-plugins': 'cairnTestPlugins',
};

/** CSI images (tools/local-cluster/csi/) → the cached binary built by `setup --csi`. */
const CSI_BINARIES: Readonly<Record<string, keyof CsiBinaryPaths>> = {
  'csi-provisioner': 'csiProvisioner',
  'csi-snapshotter': 'csiSnapshotter',
  'snapshot-controller': 'snapshotController',
};

/** Last path segment of the image repository → what runs. */
const IMAGE_TABLE: Readonly<Record<string, ImageKind>> = {
  cairn: 'cairn',
  busybox: 'host-tools',
  alpine: 'host-tools',
  debian: 'host-tools',
  ubuntu: 'host-tools',
  bash: 'host-tools',
  pause: 'pause',
  hostpathplugin: 'csi-hostpath-driver',
  'csi-provisioner': 'csi-binary',
  'csi-snapshotter': 'csi-binary',
  'snapshot-controller': 'csi-binary',
  'velero-plugin-for-aws': 'velero-plugin',
  'velero-plugin-for-gcp': 'velero-plugin',
  'cairn-test-plugins': 'velero-plugin',
};

/** Default command of each kind when the pod gives neither command nor args (the image's ENTRYPOINT/CMD). */
const DEFAULT_COMMAND: Readonly<Record<ImageKind, readonly string[]>> = {
  cairn: [],
  'host-tools': ['sh'],
  pause: ['sleep', 'infinity'],
  'csi-hostpath-driver': [],
  'csi-binary': [],
  'velero-plugin': [],
};

/** `ghcr.io:443/x/cairn:v1@sha256:…` → `cairn`. */
export function imageRepositoryName(image: string): string {
  const noDigest = image.split('@')[0] ?? '';
  const segments = noDigest.split('/');
  const last = segments[segments.length - 1] ?? '';
  const colon = last.indexOf(':');
  return colon >= 0 ? last.slice(0, colon) : last;
}

export function imageKind(image: string): ImageKind | undefined {
  return IMAGE_TABLE[imageRepositoryName(image)];
}

export interface ResolveProgramOptions {
  image: string;
  command?: readonly string[] | undefined;
  args?: readonly string[] | undefined;
  /** The checkout the kubelet runs from; cairn runs as `<repo>/node_modules/.bin/node <repo>/bin/run.js`. */
  repoDir: string;
}

export type ResolvedProgram =
  /** `imageFiles`: files the image would contain, bound read-only at their path in the container. */
  | { ok: true; kind: ImageKind; argv: string[]; imageFiles?: { source: string; target: string }[] }
  | { ok: false; reason: 'ErrImagePull'; message: string };

/** Applies Kubernetes' command/args rules (command replaces ENTRYPOINT, args replace CMD) to the mapped image. */
export function resolveProgram(opts: ResolveProgramOptions): ResolvedProgram {
  const kind = imageKind(opts.image);
  if (!kind) {
    return {
      ok: false,
      reason: 'ErrImagePull',
      message: `image "${opts.image}" is not available on the local test bed (known: ${Object.keys(IMAGE_TABLE).join(', ')})`,
    };
  }
  const command = opts.command ?? [];
  const args = opts.args ?? [];
  if (kind === 'cairn') {
    const cairn = [join(opts.repoDir, 'node_modules/.bin/node'), join(opts.repoDir, 'bin/run.js')];
    const [first, ...rest] = command;
    if (first === undefined) return { ok: true, kind, argv: [...cairn, ...args] };
    if (first === '/cairn' || first === 'cairn') return { ok: true, kind, argv: [...cairn, ...rest, ...args] };
    // cairn's image is a Node.js image: `node` is the Node 24 cairn runs on.
    if (first === 'node') return { ok: true, kind, argv: [cairn[0] ?? 'node', ...rest, ...args] };
    return { ok: true, kind, argv: [...command, ...args] };
  }
  if (kind === 'csi-hostpath-driver') {
    // The test bed's own host-path driver (the upstream one is not available from the module proxy here).
    // tsx by path: `--import tsx` would resolve from the container's working directory.
    const tsx = join(opts.repoDir, 'node_modules/tsx/dist/loader.mjs');
    const entry = [join(opts.repoDir, 'node_modules/.bin/node'), '--import', tsx, join(opts.repoDir, 'tools/local-cluster/csi/driver/main.ts')];
    return { ok: true, kind, argv: [...entry, ...args] };
  }
  if (kind === 'csi-binary') {
    let binary: string;
    try {
      binary = csiBinaryPaths()[CSI_BINARIES[imageRepositoryName(opts.image)] ?? 'csiProvisioner'];
    } catch (err) {
      return { ok: false, reason: 'ErrImagePull', message: err instanceof Error ? err.message : String(err) };
    }
    // The images' entrypoint is the binary itself; a command naming it is mapped the same way.
    const rest = command.length > 0 && /^\/?(csi-provisioner|csi-snapshotter|snapshot-controller)$/.test(command[0] ?? '') ? command.slice(1) : command;
    return { ok: true, kind, argv: [binary, ...rest, ...args] };
  }
  if (kind === 'velero-plugin') {
    const name = imageRepositoryName(opts.image);
    const binary = toolBinaryPath(PLUGIN_BINARIES[name] ?? 'cairnTestPlugins');
    if (!binary) {
      return { ok: false, reason: 'ErrImagePull', message: `the binary of ${name} is not built yet (the plugin tests build it with ensureToolBinary)` };
    }
    // The image holds the plugin at /plugins/<name> (bound in, so an unprivileged container reads it wherever the
    // cache is); its entrypoint copies it into the shared volume mounted at /target and exits.
    const imageFiles = [{ source: binary, target: `/plugins/${name}` }];
    if (command.length > 0) return { ok: true, kind, argv: [...command, ...args], imageFiles };
    return { ok: true, kind, argv: ['cp', `/plugins/${name}`, `/target/${name}`], imageFiles };
  }
  if (command.length > 0) return { ok: true, kind, argv: [...command, ...args] };
  if (args.length > 0) return { ok: true, kind, argv: [...args] };
  return { ok: true, kind, argv: [...DEFAULT_COMMAND[kind]] };
}
