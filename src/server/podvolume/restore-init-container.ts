/**
 * The `restore-wait` init container put in front of a restored pod whose volumes get fs-backup data
 * (docs/fs-backup.md). It runs `cairn restore-helper <restore UID>`, which waits for the data mover's done
 * markers `/restores/<volume>/.velero/<restore UID>`, so the workload starts only on restored data.
 *
 * Settings come from the plugin ConfigMap (labels `velero.io/plugin-config` and
 * `velero.io/pod-volume-restore=RestoreItemAction` in the install namespace), with Velero's keys and rules: `image`
 * (a value without a registry part is ignored; one without a tag gets the default image's tag), `cpuRequest`,
 * `memRequest`, `cpuLimit`, `memLimit` (default 100m / 128Mi; "0" leaves that one unset), `secCtxRunAsUser`,
 * `secCtxRunAsGroup`, `secCtxAllowPrivilegeEscalation`, `secCtx` (YAML; its fields win over the three single keys).
 * Without security settings there, the first app container's securityContext is copied; without that, a context
 * that passes PodSecurity `restricted` is used. The done markers are 0755/0644, so any user can see them.
 */
import { parse as parseYaml } from 'yaml';

export const RESTORE_WAIT_CONTAINER = 'restore-wait';
/** The name Velero used before 1.10; removed like `restore-wait` when a pod is restored again. */
export const LEGACY_RESTORE_WAIT_CONTAINER = 'restic-wait';
export const RESTORES_MOUNT_ROOT = '/restores';
export const DEFAULT_CPU = '100m';
export const DEFAULT_MEMORY = '128Mi';

/** Labels that find the plugin ConfigMap (both must be present; the first has any value). */
export const PLUGIN_CONFIG_SELECTOR = 'velero.io/plugin-config,velero.io/pod-volume-restore=RestoreItemAction';

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: string; localhostProfile?: string };
  [key: string]: unknown;
}

export interface InitContainer {
  name: string;
  image: string;
  imagePullPolicy: string;
  command: string[];
  args: string[];
  env: { name: string; valueFrom: { fieldRef: { fieldPath: string } } }[];
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: SecurityContext;
  volumeMounts: { name: string; mountPath: string }[];
}

export interface RestoreWaitOptions {
  restoreUID: string;
  /** Pod volume names to wait for. */
  volumes: readonly string[];
  /** The server's own image (first container of the `cairn` Deployment). */
  defaultImage: string;
  /** `data` of the plugin ConfigMap, if there is one. */
  config?: Readonly<Record<string, string>>;
  /** securityContext of the pod's first app container, if set. */
  firstContainerSecurityContext?: SecurityContext;
  /** Told about ConfigMap values that are ignored, and why. */
  warn?: (message: string) => void;
}

/** The restricted-profile context Velero falls back to (also what PodSecurity `restricted` asks for). */
export function restrictedSecurityContext(): SecurityContext {
  return {
    runAsUser: 1000,
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Velero's image rule: no registry part → default image; no tag → the default image's tag appended. */
export function helperImage(configured: string | undefined, defaultImage: string, warn?: (m: string) => void): string {
  const image = configured?.trim();
  if (!image) return defaultImage;
  const parts = image.split('/');
  if (parts.length === 1) {
    warn?.(`plugin config image "${image}" has no registry part; using the default image ${defaultImage}`);
    return defaultImage;
  }
  if (parts[parts.length - 1]?.includes(':') || image.includes('@')) return image;
  return `${image}:${imageTag(defaultImage) ?? 'latest'}`;
}

/** The tag of an image reference, if it has one (`host:5000/a/b:v1` → `v1`). */
export function imageTag(image: string): string | undefined {
  const last = image.split('/').pop() ?? '';
  const i = last.indexOf(':');
  return i >= 0 ? last.slice(i + 1).split('@')[0] : undefined;
}

/** A Kubernetes quantity (`100m`, `128Mi`, `1.5`, `2e3`). */
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?$/;

function quantity(key: string, value: string | undefined, fallback: string, warn?: (m: string) => void): string | undefined {
  if (value === undefined || value.trim() === '') return fallback;
  const v = value.trim();
  if (!QUANTITY.test(v)) {
    warn?.(`plugin config ${key} "${v}" is not a quantity; using ${fallback}`);
    return fallback;
  }
  // Velero's rule: "0" means unbounded, i.e. not set.
  return /^[+-]?0*(\.0*)?$/.test(v.replace(/[a-zA-Z]+$/, '')) ? undefined : v;
}

export function helperResources(config: Readonly<Record<string, string>> | undefined, warn?: (m: string) => void): InitContainer['resources'] {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  const set = (target: Record<string, string>, name: string, v: string | undefined) => {
    if (v !== undefined) target[name] = v;
  };
  set(requests, 'cpu', quantity('cpuRequest', config?.cpuRequest, DEFAULT_CPU, warn));
  set(requests, 'memory', quantity('memRequest', config?.memRequest, DEFAULT_MEMORY, warn));
  set(limits, 'cpu', quantity('cpuLimit', config?.cpuLimit, DEFAULT_CPU, warn));
  set(limits, 'memory', quantity('memLimit', config?.memLimit, DEFAULT_MEMORY, warn));
  const out: InitContainer['resources'] = {};
  if (Object.keys(requests).length) out.requests = requests;
  if (Object.keys(limits).length) out.limits = limits;
  return out;
}

function parseInteger(key: string, value: string): number {
  const v = value.trim();
  if (!/^-?\d+$/.test(v)) throw new Error(`${key} "${v}" is not an integer`);
  return Number(v);
}

/**
 * The security context the ConfigMap asks for, or undefined when it sets none of the four keys. Throws on a value
 * that cannot be parsed (the caller then uses the fallbacks, as Velero does).
 */
export function configuredSecurityContext(config: Readonly<Record<string, string>> | undefined): SecurityContext | undefined {
  const runAsUser = config?.secCtxRunAsUser?.trim() ?? '';
  const runAsGroup = config?.secCtxRunAsGroup?.trim() ?? '';
  const allowEscalation = config?.secCtxAllowPrivilegeEscalation?.trim() ?? '';
  const secCtx = config?.secCtx ?? '';
  if (!runAsUser && !runAsGroup && !allowEscalation && !secCtx.trim()) return undefined;
  let ctx: SecurityContext = {};
  if (secCtx.trim()) {
    const parsed: unknown = parseYaml(secCtx);
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) throw new Error('secCtx is not a YAML mapping');
    ctx = { ...((parsed as SecurityContext | null) ?? {}) };
  }
  if (runAsUser && ctx.runAsUser === undefined) ctx.runAsUser = parseInteger('secCtxRunAsUser', runAsUser);
  if (runAsGroup && ctx.runAsGroup === undefined) ctx.runAsGroup = parseInteger('secCtxRunAsGroup', runAsGroup);
  if (allowEscalation && ctx.allowPrivilegeEscalation === undefined) {
    if (!/^(true|false)$/i.test(allowEscalation)) throw new Error(`secCtxAllowPrivilegeEscalation "${allowEscalation}" is not true or false`);
    ctx.allowPrivilegeEscalation = allowEscalation.toLowerCase() === 'true';
  }
  return ctx;
}

export function helperSecurityContext(opts: Pick<RestoreWaitOptions, 'config' | 'firstContainerSecurityContext' | 'warn'>): SecurityContext {
  try {
    const configured = configuredSecurityContext(opts.config);
    if (configured) return configured;
  } catch (err) {
    opts.warn?.(`plugin config security context ignored: ${(err as Error).message}`);
  }
  if (opts.firstContainerSecurityContext) return structuredClone(opts.firstContainerSecurityContext);
  return restrictedSecurityContext();
}

export function buildRestoreWaitContainer(opts: RestoreWaitOptions): InitContainer {
  const command = opts.config?.command?.trim();
  return {
    name: RESTORE_WAIT_CONTAINER,
    image: helperImage(opts.config?.image, opts.defaultImage, opts.warn),
    imagePullPolicy: 'IfNotPresent',
    command: command ? [command] : ['/cairn'],
    args: command ? [opts.restoreUID] : ['restore-helper', opts.restoreUID],
    env: [
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    resources: helperResources(opts.config, opts.warn),
    securityContext: helperSecurityContext(opts),
    volumeMounts: opts.volumes.map((v) => ({ name: v, mountPath: `${RESTORES_MOUNT_ROOT}/${v}` })),
  };
}

interface PodSpecWithInit {
  initContainers?: { name?: string }[];
  containers?: { securityContext?: SecurityContext }[];
}

/** A copy of the pod without `restore-wait`/`restic-wait` init containers (left by an earlier restore). */
export function withoutRestoreWait<T extends object>(pod: T): T {
  const copy = structuredClone(pod);
  const spec = (copy as { spec?: unknown }).spec as PodSpecWithInit | undefined;
  if (!spec?.initContainers) return copy;
  spec.initContainers = spec.initContainers.filter((c) => c.name !== RESTORE_WAIT_CONTAINER && c.name !== LEGACY_RESTORE_WAIT_CONTAINER);
  if (spec.initContainers.length === 0) delete spec.initContainers;
  return copy;
}

/** A copy of the pod with `container` as its first init container. */
export function withRestoreWait<T extends object>(pod: T, container: InitContainer): T {
  const copy = structuredClone(pod);
  const spec = ((copy as { spec?: unknown }).spec ?? {}) as PodSpecWithInit;
  spec.initContainers = [container, ...(spec.initContainers ?? [])];
  (copy as { spec?: unknown }).spec = spec;
  return copy;
}

export function firstContainerSecurityContext(pod: object): SecurityContext | undefined {
  return ((pod as { spec?: unknown }).spec as PodSpecWithInit | undefined)?.containers?.[0]?.securityContext;
}
