/**
 * A container's environment as the kubelet builds it: envFrom first, then env in order (later wins), each value
 * expanding `$(VAR)` references to variables defined before it; command and args expand against the result.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';

/** Reads referenced Secrets/ConfigMaps; undefined when the object does not exist. Values are decoded strings. */
export interface EnvSourceLookup {
  secret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  configMap(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

export interface NodeFacts {
  nodeName: string;
  nodeIp: string;
  /** Node allocatable, used for resourceFieldRef when the container has no limit. */
  allocatableCpu: string;
  allocatableMemory: string;
}

export class EnvResolutionError extends Error {
  constructor(
    readonly reason: 'CreateContainerConfigError',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Kubernetes' expansion: `$(NAME)` → value when NAME is known, else left as written; `$$` → `$`, so
 * `$$(NAME)` yields the literal `$(NAME)`.
 */
export function expandVars(input: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = vars.get(name);
      out += value ?? `$(${name})`;
      i = close;
    } else {
      out += ch;
    }
  }
  return out;
}

/** Value of a downward-API field path such as `metadata.labels['app']` or `status.hostIP`. */
export function fieldRefValue(pod: V1Pod, fieldPath: string, node: NodeFacts): string {
  const meta = pod.metadata ?? {};
  const mapRef = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (mapRef) {
    const map = mapRef[1] === 'labels' ? meta.labels : meta.annotations;
    return map?.[mapRef[2] ?? ''] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? node.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.hostIP':
    case 'status.hostIPs':
    case 'status.podIP':
    case 'status.podIPs':
      return node.nodeIp;
    default:
      throw new EnvResolutionError('CreateContainerConfigError', `unsupported fieldRef ${fieldPath}`);
  }
}

/** The downward API's `key="value"` lines, sorted by key. */
export function formatMap(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(map?.[k] ?? '')}`)
    .join('\n');
}

const BINARY_SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL_SUFFIX: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A Kubernetes quantity (`500m`, `128Mi`, `1e3`) as a number. */
export function parseQuantity(q: string): number {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(q.trim());
  if (!m) throw new Error(`invalid quantity ${q}`);
  const num = Number(m[1]);
  const suffix = m[2] ?? '';
  const factor = BINARY_SUFFIX[suffix] ?? DECIMAL_SUFFIX[suffix];
  if (factor === undefined) throw new Error(`invalid quantity suffix ${q}`);
  return num * factor;
}

/** resourceFieldRef: limits fall back to node allocatable; the result is rounded up to whole divisors. */
export function resourceFieldValue(
  container: V1Container,
  resource: string,
  divisor: string | undefined,
  node: NodeFacts,
): string {
  const [section, name] = resource.split('.') as [string, string | undefined];
  const fromSpec =
    section === 'limits' ? container.resources?.limits?.[name ?? ''] : container.resources?.requests?.[name ?? ''];
  let raw: string | undefined = typeof fromSpec === 'string' ? fromSpec : fromSpec === undefined ? undefined : String(fromSpec);
  if (raw === undefined) {
    if (section === 'limits') raw = name === 'cpu' ? node.allocatableCpu : node.allocatableMemory;
    else raw = '0';
  }
  const value = parseQuantity(raw) / parseQuantity(divisor ?? '1');
  return String(Math.ceil(value - 1e-9));
}

export interface BuildEnvOptions {
  pod: V1Pod;
  container: V1Container;
  node: NodeFacts;
  lookup: EnvSourceLookup;
  /** Variables every container starts with (service env, PATH, HOSTNAME); pod values override them. */
  base: ReadonlyMap<string, string>;
}

/** The ordered environment; throws EnvResolutionError as the kubelet reports CreateContainerConfigError. */
export async function buildContainerEnv(opts: BuildEnvOptions): Promise<Map<string, string>> {
  const { pod, container, lookup } = opts;
  const ns = pod.metadata?.namespace ?? 'default';
  const vars = new Map(opts.base);
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    const ref = from.secretRef ?? from.configMapRef;
    if (!ref) continue;
    const data = from.secretRef ? await lookup.secret(ns, ref.name ?? '') : await lookup.configMap(ns, ref.name ?? '');
    if (!data) {
      if (ref.optional) continue;
      throw new EnvResolutionError(
        'CreateContainerConfigError',
        `${from.secretRef ? 'secret' : 'configmap'} "${ref.name ?? ''}" not found`,
      );
    }
    for (const [k, v] of Object.entries(data)) vars.set(prefix + k, v);
  }
  const declared = new Map<string, string>();
  for (const e of container.env ?? []) {
    const value = await envVarValue({ ...opts, name: e.name, entry: e, ns, declaredSoFar: new Map([...vars, ...declared]) });
    if (value !== undefined) declared.set(e.name, value);
  }
  for (const [k, v] of declared) vars.set(k, v);
  return vars;
}

async function envVarValue(
  o: BuildEnvOptions & {
    name: string;
    entry: NonNullable<V1Container['env']>[number];
    ns: string;
    declaredSoFar: Map<string, string>;
  },
): Promise<string | undefined> {
  const { entry: e, lookup, ns } = o;
  if (e.valueFrom === undefined) return expandVars(e.value ?? '', o.declaredSoFar);
  const vf = e.valueFrom;
  if (vf.fieldRef) return fieldRefValue(o.pod, vf.fieldRef.fieldPath, o.node);
  if (vf.resourceFieldRef) {
    const target = vf.resourceFieldRef.containerName
      ? (o.pod.spec?.containers.find((c) => c.name === vf.resourceFieldRef?.containerName) ?? o.container)
      : o.container;
    const divisor = vf.resourceFieldRef.divisor;
    return resourceFieldValue(target, vf.resourceFieldRef.resource, divisor === undefined ? undefined : String(divisor), o.node);
  }
  const keyRef = vf.secretKeyRef ?? vf.configMapKeyRef;
  if (keyRef) {
    const kind = vf.secretKeyRef ? 'secret' : 'configmap';
    const data = vf.secretKeyRef ? await lookup.secret(ns, keyRef.name ?? '') : await lookup.configMap(ns, keyRef.name ?? '');
    const value = data?.[keyRef.key];
    if (value === undefined) {
      if (keyRef.optional) return undefined;
      const what = data ? `key "${keyRef.key}" not found in ${kind} "${keyRef.name ?? ''}"` : `${kind} "${keyRef.name ?? ''}" not found`;
      throw new EnvResolutionError('CreateContainerConfigError', what);
    }
    return value;
  }
  return '';
}

/** Expands command and args against the final environment. */
export function expandArgv(list: readonly string[] | undefined, env: ReadonlyMap<string, string>): string[] | undefined {
  return list?.map((s) => expandVars(s, env));
}
