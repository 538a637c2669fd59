/**
 * Everything needed to start one container run, worked out from the pod spec: program (from the image table),
 * environment, mounts (volumes + the termination-message file), working dir and user. Fails the way the kubelet
 * reports it: ErrImagePull or CreateContainerConfigError.
 */
import { stat, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { buildContainerEnv, EnvResolutionError, expandArgv, expandVars, type EnvSourceLookup, type NodeFacts } from './env.js';
import { BIND_SHIM_CONTAINER_PATH } from './bind-shim.js';
import { resolveProgram } from './images.js';
import type { ContainerMount, LaunchSpec } from './launch-script.js';
import type { PreparedVolume } from './volumes.js';

export interface ApiServerAddress {
  host: string;
  port: number;
}

export interface ContainerConfigOptions {
  pod: V1Pod;
  container: V1Container;
  volumes: ReadonlyMap<string, PreparedVolume>;
  node: NodeFacts;
  lookup: EnvSourceLookup;
  repoDir: string;
  apiServer: ApiServerAddress;
  terminationLogFile: string;
  /** The host's PATH, so mapped images find sh, coreutils, setpriv… */
  hostPath: string;
  /** The bind shim to preload (per-node listening addresses), if it could be built. */
  bindShim?: string | undefined;
  /**
   * Host directories every container must still see: the stand-in's containers share the host's root, and their
   * launch script, exit-code file and program lie there (the node's directory, the checkout the programs run from).
   */
  hostDirs?: readonly string[];
}

export type ContainerConfig =
  | { ok: true; launch: Omit<LaunchSpec, 'exitCodeFile'>; env: Map<string, string> }
  | { ok: false; reason: 'ErrImagePull' | 'CreateContainerConfigError'; message: string };

export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** What every container's environment starts with: the `kubernetes` service variables and basic process env. */
export function baseEnv(o: { podName: string; apiServer: ApiServerAddress; hostPath: string; runAsUser: number | undefined }): Map<string, string> {
  const { host, port } = o.apiServer;
  return new Map([
    ['PATH', o.hostPath],
    ['HOSTNAME', o.podName],
    ['HOME', o.runAsUser === undefined || o.runAsUser === 0 ? '/root' : '/'],
    ['KUBERNETES_SERVICE_HOST', host],
    ['KUBERNETES_SERVICE_PORT', String(port)],
    ['KUBERNETES_SERVICE_PORT_HTTPS', String(port)],
    ['KUBERNETES_PORT', `tcp://${host}:${port}`],
    [`KUBERNETES_PORT_${port}_TCP`, `tcp://${host}:${port}`],
    [`KUBERNETES_PORT_${port}_TCP_PROTO`, 'tcp'],
    [`KUBERNETES_PORT_${port}_TCP_PORT`, String(port)],
    [`KUBERNETES_PORT_${port}_TCP_ADDR`, host],
  ]);
}

/**
 * What a container's securityContext takes away, as a real runtime would: with `capabilities.drop: [ALL]` only the
 * added capabilities stay; `allowPrivilegeEscalation: false` sets no_new_privs. A privileged container keeps all.
 */
export function containerPrivileges(c: V1Container): { capabilities?: string[]; noNewPrivs?: boolean } {
  const sc = c.securityContext;
  if (!sc || sc.privileged) return {};
  const dropsAll = (sc.capabilities?.drop ?? []).some((d) => d.toUpperCase() === 'ALL');
  return {
    ...(dropsAll ? { capabilities: (sc.capabilities?.add ?? []).map((a) => a.toLowerCase().replace(/^cap_/, '')) } : {}),
    ...(sc.allowPrivilegeEscalation === false ? { noNewPrivs: true } : {}),
  };
}

/**
 * A volume mount at or above one of `hostDirs` would hide it from the container (its root is the host's): the
 * container could not start, and its pod would wait for ever. Answers the message that refuses it, else undefined.
 * (A real node's containers have their own root, where any mountPath is free.)
 */
export function mountHidingHostDir(mountPaths: readonly string[], hostDirs: readonly string[]): string | undefined {
  for (const target of mountPaths) {
    const t = resolve('/', target);
    const hidden = hostDirs.find((d) => {
      const dir = resolve(d);
      return t === '/' || dir === t || dir.startsWith(t + '/');
    });
    if (hidden) {
      return `mountPath "${target}" would hide ${hidden} from the container: on this test bed's kubelet stand-in containers share the host's root, so mount volumes elsewhere`;
    }
  }
  return undefined;
}

export async function containerConfig(o: ContainerConfigOptions): Promise<ContainerConfig> {
  const { pod, container: c } = o;
  const podSc = pod.spec?.securityContext;
  const runAsUser = c.securityContext?.runAsUser ?? podSc?.runAsUser;
  const runAsGroup = c.securityContext?.runAsGroup ?? podSc?.runAsGroup;
  let env: Map<string, string>;
  try {
    env = await buildContainerEnv({
      pod,
      container: c,
      node: o.node,
      lookup: o.lookup,
      base: baseEnv({ podName: pod.metadata?.name ?? '', apiServer: o.apiServer, hostPath: o.hostPath, runAsUser }),
    });
  } catch (err) {
    if (err instanceof EnvResolutionError) return { ok: false, reason: err.reason, message: err.message };
    throw err;
  }
  if (o.bindShim) env.set('CAIRN_POD_IP', o.node.nodeIp);
  const program = resolveProgram({
    image: c.image ?? '',
    command: expandArgv(c.command, env),
    args: expandArgv(c.args, env),
    repoDir: o.repoDir,
  });
  if (!program.ok) return { ok: false, reason: program.reason, message: program.message };

  const hiding = mountHidingHostDir(
    [...(c.volumeMounts ?? []).map((vm) => vm.mountPath), ...(c.volumeDevices ?? []).map((vd) => vd.devicePath)],
    o.hostDirs ?? [],
  );
  if (hiding) return { ok: false, reason: 'CreateContainerConfigError', message: hiding };
  const mounts: ContainerMount[] = [];
  for (const vm of c.volumeMounts ?? []) {
    const vol = o.volumes.get(vm.name);
    if (!vol) return { ok: false, reason: 'CreateContainerConfigError', message: `volume "${vm.name}" is not defined` };
    const sub = vm.subPathExpr ? expandVars(vm.subPathExpr, env) : vm.subPath;
    let source = vol.hostPath;
    if (sub) {
      source = resolve(vol.hostPath, sub);
      if (!source.startsWith(resolve(vol.hostPath) + '/')) {
        return { ok: false, reason: 'CreateContainerConfigError', message: `subPath "${sub}" escapes volume "${vm.name}"` };
      }
      if (!(await stat(source).catch(() => undefined))) await mkdir(source, { recursive: true });
    }
    const isFile = (await stat(source)).isFile();
    mounts.push({
      source,
      target: vm.mountPath,
      readOnly: Boolean(vm.readOnly) || vol.readOnly,
      sourceIsFile: isFile,
      // As on a real node, Bidirectional is honoured for privileged containers only.
      bidirectional: vm.mountPropagation === 'Bidirectional' && c.securityContext?.privileged === true,
    });
  }
  for (const f of program.imageFiles ?? []) mounts.push({ source: f.source, target: f.target, readOnly: true, sourceIsFile: true });
  // Block volumes (volumeDevices): the published device file is bound at devicePath.
  for (const vd of c.volumeDevices ?? []) {
    const vol = o.volumes.get(vd.name);
    if (!vol) return { ok: false, reason: 'CreateContainerConfigError', message: `volume "${vd.name}" is not defined` };
    mounts.push({ source: vol.hostPath, target: vd.devicePath, readOnly: vol.readOnly, sourceIsFile: true });
  }
  // Parents before children, so a mount at /data/sub is not hidden by a later one at /data.
  mounts.sort((a, b) => a.target.split('/').length - b.target.split('/').length);
  mounts.push({
    source: o.terminationLogFile,
    target: c.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH,
    readOnly: false,
    sourceIsFile: true,
  });
  if (o.bindShim) mounts.push({ source: o.bindShim, target: BIND_SHIM_CONTAINER_PATH, readOnly: true, sourceIsFile: true });
  const groups = [...(podSc?.supplementalGroups ?? []), ...(podSc?.fsGroup !== undefined ? [podSc.fsGroup] : [])];
  return {
    ok: true,
    env,
    launch: {
      argv: program.argv,
      mounts,
      workingDir: c.workingDir,
      runAsUser,
      runAsGroup,
      supplementalGroups: groups,
      ...containerPrivileges(c),
      preload: o.bindShim ? BIND_SHIM_CONTAINER_PATH : undefined,
    },
  };
}

/** `cairn://<pod-uid>/<container>/<restartCount>` */
export function containerId(podUid: string, name: string, restartCount: number): string {
  return `cairn://${join(podUid, name, String(restartCount))}`;
}
