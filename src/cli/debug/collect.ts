/**
 * What `cairn debug` collects and where each piece goes in the bundle (docs/cli.md "debug"). The collection decides;
 * a DebugSource (the cluster, or a fake in tests) answers. Every piece is collected on its own: one that fails is
 * written down in `collection.txt` and the others go on, so a half-broken install still yields a useful bundle.
 *
 * Layout under `cairn-bundle/`:
 *   version.txt                      client, server and Kubernetes versions
 *   client-config.json               the client config file (`cairn client config`)
 *   collection.txt                   what was collected and what could not be
 *   resources/<plural>/<name>.yaml   the velero.io objects of the install namespace (redacted)
 *   workloads/<kind>-<name>.yaml     the server Deployment and the node-agent DaemonSet (redacted)
 *   configmaps/<name>.yaml           the ConfigMaps the server and node agent are configured with (redacted)
 *   logs/<role>/<pod>/<container>.log (and .previous.log) for server, node-agent, data-mover and other pods
 *   backup_describe_<name>.txt, backup_<name>.log, restore_describe_<name>.txt, restore_<name>.log  (Velero's names)
 */
import { stringify } from 'yaml';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { Labels } from '../../api/index.js';
import { NODE_AGENT_NAME, SERVER_NAME } from '../../api/install-names.js';
import { oneLine, NotFoundError } from '../../base/errors.js';
import type { BundleEntry } from './bundle.js';
import { segment } from './bundle.js';
import { redactObject, redactText } from './redact.js';

type KubeObject = { apiVersion?: string | undefined; kind?: string | undefined; metadata?: { name?: string | undefined } | undefined };

export type OperationKind = 'backup' | 'restore';

/** The cluster as `debug` sees it, bound to the install namespace. It has no way to read a Secret. */
export interface DebugSource {
  clusterVersion(): Promise<string>;
  serverVersion(): Promise<string>;
  /** The objects of one velero.io resource in the install namespace. */
  listVeleroObjects(resource: { plural: string; version: string }): Promise<KubeObject[]>;
  /** The server Deployment and the node-agent DaemonSet; null when absent. */
  workload(kind: 'Deployment' | 'DaemonSet', name: string): Promise<(KubeObject & { spec?: unknown }) | null>;
  /** null when absent. */
  configMap(name: string): Promise<V1ConfigMap | null>;
  pods(): Promise<V1Pod[]>;
  podLog(pod: string, container: string, previous: boolean): Promise<string>;
  describe(kind: OperationKind, name: string): Promise<string>;
  operationLog(kind: OperationKind, name: string): Promise<Buffer>;
}

export interface CollectOptions {
  namespace: string;
  backup?: string | undefined;
  restore?: string | undefined;
  clientVersion: string;
  nodeVersion: string;
  clientConfig: unknown;
  clientConfigPath: string;
  /** velero.io resources to list (plural, version). */
  resources: readonly { plural: string; version: string }[];
  /** Called at each step, for progress. */
  onStep?: (text: string) => void;
}

export interface Collected {
  entries: BundleEntry[];
  /** What could not be collected, one line each (also in collection.txt). */
  problems: string[];
  /** Names given with --backup/--restore that do not exist. */
  missing: string[];
}

/** The pod's role, from the labels install and the exposer put on pods. */
export function podRole(pod: V1Pod): 'server' | 'node-agent' | 'data-mover' | 'other' {
  const labels = pod.metadata?.labels ?? {};
  if (labels.deploy === SERVER_NAME) return 'server';
  if (labels.name === NODE_AGENT_NAME) return 'node-agent';
  const hosting = [Labels.PodVolumeBackup, Labels.PodVolumeRestore, Labels.DataUpload, Labels.DataDownload];
  if (hosting.some((l) => labels[l] !== undefined)) return 'data-mover';
  return 'other';
}

/** ConfigMap names the workloads are started with: every `--…-configmap NAME` / `--…-configmap=NAME` argument. */
export function configMapArgs(workloads: readonly (KubeObject & { spec?: unknown })[]): string[] {
  const names = new Set<string>();
  for (const w of workloads) {
    const containers = (w.spec as { template?: { spec?: { containers?: { args?: string[]; command?: string[] }[] } } } | undefined)?.template?.spec?.containers ?? [];
    for (const c of containers) {
      const args = [...(c.command ?? []), ...(c.args ?? [])];
      args.forEach((arg, i) => {
        const m = /^--[a-z-]*configmap(?:=(.*))?$/.exec(arg);
        if (!m) return;
        const name = m[1] ?? args[i + 1];
        if (name && !name.startsWith('-')) names.add(name);
      });
    }
  }
  return [...names].sort();
}

const toYaml = (obj: unknown): string => stringify(redactObject(obj), { lineWidth: 0 });

export async function collectBundle(source: DebugSource | { unreachable: string }, opts: CollectOptions): Promise<Collected> {
  const entries: BundleEntry[] = [];
  const problems: string[] = [];
  const missing: string[] = [];
  const step = (text: string) => opts.onStep?.(text);
  const add = (path: string, content: string | Buffer) => entries.push({ path, content });
  /** Runs one piece; a failure becomes a line in collection.txt. */
  const attempt = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (err) {
      // Errors from the API client already start with what they were doing.
      const message = redactText(oneLine(err));
      problems.push(message.startsWith(what) ? message : `${what}: ${message}`);
      return undefined;
    }
  };

  step('Collecting the client version and config');
  add('client-config.json', `${JSON.stringify(redactObject(opts.clientConfig), null, 2)}\n`);
  const versions = [`Client:`, `\tVersion: ${opts.clientVersion}`, `\tNode.js: ${opts.nodeVersion}`];

  if ('unreachable' in source) {
    problems.push(`${source.unreachable}: only the client's version and config were collected`);
    add('version.txt', `${versions.join('\n')}\n`);
    add('collection.txt', collectionText(opts, entries, problems));
    return { entries, problems, missing };
  }

  step(`Collecting velero.io objects in namespace ${opts.namespace}`);
  for (const resource of opts.resources) {
    const items = await attempt(`list ${resource.plural}.velero.io`, () => source.listVeleroObjects(resource));
    for (const item of items ?? []) add(`resources/${resource.plural}/${segment(item.metadata?.name ?? 'unnamed')}.yaml`, toYaml(item));
  }

  step('Collecting the server and node-agent workloads and their ConfigMaps');
  const workloads: (KubeObject & { spec?: unknown })[] = [];
  for (const [kind, name] of [['Deployment', SERVER_NAME], ['DaemonSet', NODE_AGENT_NAME]] as const) {
    const w = await attempt(`read ${kind} ${name}`, () => source.workload(kind, name));
    if (w) {
      workloads.push(w);
      add(`workloads/${kind.toLowerCase()}-${segment(name)}.yaml`, toYaml(w));
    } else if (w === null) {
      problems.push(`read ${kind} ${name}: not found in namespace ${opts.namespace}${kind === 'Deployment' ? ' (is cairn installed there?)' : ' (installed without the node agent?)'}`);
    }
  }
  for (const name of configMapArgs(workloads)) {
    const cm = await attempt(`read ConfigMap ${name}`, () => source.configMap(name));
    if (cm) add(`configmaps/${segment(name)}.yaml`, toYaml(cm));
    else if (cm === null) problems.push(`read ConfigMap ${name}: not found in namespace ${opts.namespace}, though the workloads name it`);
  }

  step('Collecting versions');
  const cluster = await attempt('read the Kubernetes version', () => source.clusterVersion());
  const server = await attempt('ask the cairn server for its version', () => source.serverVersion());
  versions.push('Server:', server !== undefined ? `\tVersion: ${server}` : '\t<error getting server version: see collection.txt>');
  versions.push('Kubernetes:', cluster !== undefined ? `\tVersion: ${cluster}` : '\t<error getting Kubernetes version: see collection.txt>');
  add('version.txt', `${versions.join('\n')}\n`);

  step(`Collecting pod logs in namespace ${opts.namespace}`);
  const pods = (await attempt(`list pods in ${opts.namespace}`, () => source.pods())) ?? [];
  for (const pod of pods) {
    const name = pod.metadata?.name ?? 'unnamed';
    const dir = `logs/${podRole(pod)}/${segment(name)}`;
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
    for (const container of containers) {
      const status = statuses.find((s) => s.name === container);
      // A container that never started has no log to read.
      if (!status || (!status.state?.running && !status.state?.terminated && !status.lastState?.terminated)) continue;
      const log = await attempt(`log of ${name}/${container}`, () => source.podLog(name, container, false));
      if (log !== undefined) add(`${dir}/${segment(container)}.log`, redactText(log));
      if ((status?.restartCount ?? 0) > 0) {
        const previous = await attempt(`previous log of ${name}/${container}`, () => source.podLog(name, container, true));
        if (previous !== undefined) add(`${dir}/${segment(container)}.previous.log`, redactText(previous));
      }
    }
  }

  for (const kind of ['backup', 'restore'] as const) {
    const name = kind === 'backup' ? opts.backup : opts.restore;
    if (!name) continue;
    step(`Collecting the description and log of ${kind} ${name}`);
    try {
      add(`${kind}_describe_${segment(name)}.txt`, redactText(await source.describe(kind, name)));
    } catch (err) {
      if (err instanceof NotFoundError) {
        missing.push(`${kind} "${name}"`);
        problems.push(`describe ${kind} ${name}: ${oneLine(err)}`);
        continue;
      }
      problems.push(`describe ${kind} ${name}: ${redactText(oneLine(err))}`);
    }
    const log = await attempt(`log of ${kind} ${name}`, () => source.operationLog(kind, name));
    if (log !== undefined) add(`${kind}_${segment(name)}.log`, redactText(log.toString('utf8')));
  }

  add('collection.txt', collectionText(opts, entries, problems));
  return { entries, problems, missing };
}

function collectionText(opts: CollectOptions, entries: readonly BundleEntry[], problems: readonly string[]): string {
  const lines = [
    `cairn debug bundle for namespace ${opts.namespace}`,
    ...(opts.backup ? [`backup: ${opts.backup}`] : []),
    ...(opts.restore ? [`restore: ${opts.restore}`] : []),
    `client config: ${opts.clientConfigPath}`,
    'Secrets are never read; values that look like credentials are replaced by <redacted>.',
    '',
    'Collected:',
    ...entries.map((e) => `  ${e.path}`),
    '  collection.txt',
    '',
    problems.length ? 'Could not collect:' : 'Everything was collected.',
    ...problems.map((p) => `  ${p}`),
  ];
  return `${lines.join('\n')}\n`;
}
