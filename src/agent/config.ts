/**
 * The node-agent ConfigMap (docs/node-agent.md, flag `--node-agent-configmap`): one JSON document in the
 * ConfigMap's data (the key name is free). cairn reads `loadConcurrency`, `loadAffinity`, `backupPVC`,
 * `restorePVC`, `podResources`, `priorityClassName`, `privilegedFsBackup`, `podLabels`, `podAnnotations` and its own
 * `uploadBytesPerSecond` (not in Velero: a cap on what each backup pod writes to the object store),
 * `storeRetryTimeout` (how long each data-mover pod retries an unreachable or throttling object store before it
 * fails) and `listingCacheDir` (where backup pods keep listing caches on the node); other keys of Velero's schema
 * (data-mover settings) are accepted, and the node agent logs a warning naming them at start. Read once at startup,
 * as Velero.
 */
import type { V1ResourceRequirements } from '@kubernetes/client-node';
import { isLabelKey, isLabelValue, matchesLabelSelector, type LabelSelectorLike } from '../api/label-selectors.js';
import { Labels } from '../api/constants.js';
import { isGoDuration, parseDuration } from '../api/duration.js';
import { InvalidUploadRateError, validUploadRate } from '../plugins/object-store/upload-rate.js';

export interface PerNodeConcurrency {
  nodeSelector: LabelSelectorLike;
  number: number;
}

/**
 * Where snapshot data movement may run (Velero's `loadAffinity`): nodes whose labels match `nodeSelector`; an entry
 * with `storageClass` applies to volumes of that class only.
 */
export interface LoadAffinity {
  nodeSelector: LabelSelectorLike;
  storageClass?: string;
}

/**
 * How the backup PVC of a DataUpload is made for volumes of one storage class (Velero's `backupPVC`, keyed by the
 * source volume's class): another class, read-only access (ReadOnlyMany, mounted read-only; with `spcNoRelabeling` the
 * pod runs with SELinux type `spc_t` so the read-only volume is not relabeled), annotations on the PVC.
 */
export interface BackupPvcConfig {
  storageClass?: string;
  readOnly?: boolean;
  spcNoRelabeling?: boolean;
  annotations?: Record<string, string>;
}

export interface NodeAgentConfig {
  loadConcurrency?: {
    globalConfig?: number;
    perNodeConfig?: PerNodeConcurrency[];
    prepareQueueLength?: number;
  };
  loadAffinity?: LoadAffinity[];
  backupPVC?: Record<string, BackupPvcConfig>;
  /**
   * Velero's `restorePVC`. `ignoreDelayBinding: true`: a DataDownload whose target PVC's class binds
   * WaitForFirstConsumer is claimed by any node agent the load affinity allows; false or unset (Velero's default): by
   * the agent of the node the workload using the target was scheduled to, once it is (data-download.ts).
   */
  restorePVC?: { ignoreDelayBinding?: boolean };
  podResources?: { cpuRequest?: string; memoryRequest?: string; cpuLimit?: string; memoryLimit?: string };
  priorityClassName?: string;
  privilegedFsBackup?: boolean;
  /**
   * Velero's `podLabels` and `podAnnotations`: put on every data-mover pod, instead of the cloud identity label and
   * annotation the pods otherwise take from the node agent's pod (hosting-pod.ts). The pod's own label naming its
   * PVB/PVR/DataUpload/DataDownload is kept.
   */
  podLabels?: Record<string, string>;
  podAnnotations?: Record<string, string>;
  /** cairn's own: bytes per second each backup pod (PVB or DataUpload) may write to the object store. */
  uploadBytesPerSecond?: number;
  /**
   * cairn's own: how long a data-mover pod keeps retrying one object-store operation that fails transiently
   * (connection refused or reset, timeouts, throttling, 5xx) before the PVB/PVR/DataUpload/DataDownload fails
   * (a Go duration; default 5m).
   */
  storeRetryTimeout?: string;
  /**
   * cairn's own: the directory on each node where backup pods keep every volume's listing cache between backups
   * (default DEFAULT_LISTING_CACHE_DIR; "" keeps none, and every backup reads the previous snapshot's listings).
   */
  listingCacheDir?: string;
}

/** Where backup pods keep the listing caches on a node unless the ConfigMap says otherwise. */
export const DEFAULT_LISTING_CACHE_DIR = '/var/lib/cairn/listing-cache';

/** The node directory of the listing caches, or undefined when the ConfigMap turned them off. */
export function listingCacheHostDir(config: NodeAgentConfig): string | undefined {
  const dir = config.listingCacheDir ?? DEFAULT_LISTING_CACHE_DIR;
  return dir === '' ? undefined : dir;
}

export class NodeAgentConfigError extends Error {
  override name = 'NodeAgentConfigError';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalInteger(v: unknown, where: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new NodeAgentConfigError(`${where} must be an integer`);
  return v;
}

function optionalString(v: unknown, where: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new NodeAgentConfigError(`${where} must be a string`);
  return v;
}

/** The keys of the document cairn acts on; any other (a newer Velero's...) is reported. */
const HANDLED_KEYS: ReadonlySet<string> = new Set<keyof NodeAgentConfig>([
  'loadConcurrency',
  'loadAffinity',
  'backupPVC',
  'restorePVC',
  'podResources',
  'priorityClassName',
  'privilegedFsBackup',
  'podLabels',
  'podAnnotations',
  'uploadBytesPerSecond',
  'storeRetryTimeout',
  'listingCacheDir',
]);

/** The ConfigMap's settings and the keys of its document cairn does not act on (to be reported, never dropped quietly). */
export function readNodeAgentConfig(data: Record<string, string> | undefined): { config: NodeAgentConfig; notApplied: string[] } {
  const config = parseNodeAgentConfig(data);
  const raw = documentOf(data);
  if (!isObject(raw)) return { config, notApplied: [] };
  const notApplied = Object.keys(raw).filter((k) => !HANDLED_KEYS.has(k));
  // Settings of a storage class's backup PVC that cairn does not know (a newer Velero's) are named too.
  for (const [sc, entry] of Object.entries(isObject(raw.backupPVC) ? raw.backupPVC : {})) {
    if (!isObject(entry)) continue;
    notApplied.push(...Object.keys(entry).filter((k) => !BACKUP_PVC_KEYS.has(k)).map((k) => `backupPVC.${sc}.${k}`));
    if (entry.spcNoRelabeling === true && entry.readOnly !== true) notApplied.push(`backupPVC.${sc}.spcNoRelabeling (only with readOnly)`);
  }
  if (isObject(raw.restorePVC)) {
    notApplied.push(...Object.keys(raw.restorePVC).filter((k) => k !== 'ignoreDelayBinding').map((k) => `restorePVC.${k}`));
  }
  return { config, notApplied };
}

function documentOf(data: Record<string, string> | undefined): unknown {
  const values = Object.values(data ?? {});
  if (values.length === 0) return {};
  const text = values.at(-1) ?? '';
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new NodeAgentConfigError(`not a JSON document: ${(err as Error).message}`);
  }
}

/** Parses the ConfigMap's data: exactly one JSON document is expected; with several keys the last one wins (Velero). */
export function parseNodeAgentConfig(data: Record<string, string> | undefined): NodeAgentConfig {
  const raw = documentOf(data);
  if (!isObject(raw)) throw new NodeAgentConfigError('must be a JSON object');
  const out: NodeAgentConfig = {};
  if (raw.loadConcurrency !== undefined) {
    const lc = raw.loadConcurrency;
    if (!isObject(lc)) throw new NodeAgentConfigError('loadConcurrency must be an object');
    const perNode = lc.perNodeConfig ?? [];
    if (!Array.isArray(perNode)) throw new NodeAgentConfigError('loadConcurrency.perNodeConfig must be a list');
    const globalConfig = optionalInteger(lc.globalConfig, 'loadConcurrency.globalConfig');
    const prepareQueueLength = optionalInteger(lc.prepareQueueLength, 'loadConcurrency.prepareQueueLength');
    out.loadConcurrency = {
      ...(globalConfig !== undefined ? { globalConfig } : {}),
      ...(prepareQueueLength !== undefined ? { prepareQueueLength } : {}),
      perNodeConfig: perNode.map((rule: unknown, i) => {
        if (!isObject(rule)) throw new NodeAgentConfigError(`loadConcurrency.perNodeConfig[${i}] must be an object`);
        const nodeSelector = parseNodeSelector(rule.nodeSelector ?? {}, `loadConcurrency.perNodeConfig[${i}].nodeSelector`);
        return { nodeSelector, number: optionalInteger(rule.number, `loadConcurrency.perNodeConfig[${i}].number`) ?? 0 };
      }),
    };
  }
  if (raw.loadAffinity !== undefined && raw.loadAffinity !== null) out.loadAffinity = parseLoadAffinity(raw.loadAffinity);
  if (raw.backupPVC !== undefined && raw.backupPVC !== null) out.backupPVC = parseBackupPvc(raw.backupPVC);
  if (raw.restorePVC !== undefined && raw.restorePVC !== null) {
    if (!isObject(raw.restorePVC)) throw new NodeAgentConfigError('restorePVC must be an object');
    const ignoreDelayBinding = optionalBoolean(raw.restorePVC.ignoreDelayBinding, 'restorePVC.ignoreDelayBinding');
    out.restorePVC = ignoreDelayBinding !== undefined ? { ignoreDelayBinding } : {};
  }
  if (raw.podResources !== undefined) {
    const pr = raw.podResources;
    if (!isObject(pr)) throw new NodeAgentConfigError('podResources must be an object');
    const r: NonNullable<NodeAgentConfig['podResources']> = {};
    for (const key of ['cpuRequest', 'memoryRequest', 'cpuLimit', 'memoryLimit'] as const) {
      const v = optionalString(pr[key], `podResources.${key}`);
      if (v !== undefined) r[key] = v;
    }
    out.podResources = r;
  }
  const pc = optionalString(raw.priorityClassName, 'priorityClassName');
  if (pc !== undefined) out.priorityClassName = pc;
  if (raw.privilegedFsBackup !== undefined) {
    if (typeof raw.privilegedFsBackup !== 'boolean') throw new NodeAgentConfigError('privilegedFsBackup must be true or false');
    out.privilegedFsBackup = raw.privilegedFsBackup;
  }
  const podLabels = optionalStringMap(raw.podLabels, 'podLabels', 'label');
  const owning = Object.keys(podLabels ?? {}).find((k) => OWNER_LABELS.has(k));
  if (owning) throw new NodeAgentConfigError(`podLabels: ${owning} is the label that names each data-mover pod's PVB/PVR/DataUpload/DataDownload`);
  if (podLabels) out.podLabels = podLabels;
  const podAnnotations = optionalStringMap(raw.podAnnotations, 'podAnnotations', 'annotation');
  if (podAnnotations) out.podAnnotations = podAnnotations;
  const rate = optionalInteger(raw.uploadBytesPerSecond, 'uploadBytesPerSecond');
  if (rate !== undefined) {
    try {
      out.uploadBytesPerSecond = validUploadRate(rate, 'uploadBytesPerSecond');
    } catch (err) {
      if (err instanceof InvalidUploadRateError) throw new NodeAgentConfigError(err.message);
      throw err;
    }
  }
  const retry = optionalString(raw.storeRetryTimeout, 'storeRetryTimeout');
  if (retry !== undefined) {
    if (!isGoDuration(retry) || parseDuration(retry) < 0) throw new NodeAgentConfigError(`storeRetryTimeout must be a duration such as "5m" or "90s" (got "${retry}")`);
    out.storeRetryTimeout = retry;
  }
  if (raw.listingCacheDir !== undefined && raw.listingCacheDir !== null) {
    const dir = raw.listingCacheDir;
    if (typeof dir !== 'string' || (dir !== '' && !dir.startsWith('/'))) throw new NodeAgentConfigError('listingCacheDir must be an absolute path on the node, or "" for no listing cache');
    out.listingCacheDir = dir;
  }
  return out;
}

const BACKUP_PVC_KEYS: ReadonlySet<string> = new Set<keyof BackupPvcConfig>(['storageClass', 'readOnly', 'spcNoRelabeling', 'annotations']);

/** The labels the node agent finds a data-mover pod's owner by: not the ConfigMap's to set. */
const OWNER_LABELS: ReadonlySet<string> = new Set([Labels.PodVolumeBackup, Labels.PodVolumeRestore, Labels.DataUpload, Labels.DataDownload]);

/**
 * Labels or annotations for the data-mover pods, checked as the API server checks them: a key or label value it would
 * refuse fails the node agent's start with the reason, not every data-mover pod's creation later.
 */
function optionalStringMap(v: unknown, where: string, what: 'label' | 'annotation'): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v) || Object.values(v).some((x) => typeof x !== 'string')) throw new NodeAgentConfigError(`${where} must map ${what} keys to strings`);
  const map = v as Record<string, string>;
  for (const [key, value] of Object.entries(map)) {
    if (!isLabelKey(key)) throw new NodeAgentConfigError(`${where}: "${key}" is not a valid ${what} key`);
    if (what === 'label' && !isLabelValue(value)) throw new NodeAgentConfigError(`${where}.${key}: "${value}" is not a valid label value`);
  }
  return Object.keys(map).length > 0 ? { ...map } : undefined;
}

function optionalBoolean(v: unknown, where: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new NodeAgentConfigError(`${where} must be true or false`);
  return v;
}

function parseBackupPvc(v: unknown): Record<string, BackupPvcConfig> {
  if (!isObject(v)) throw new NodeAgentConfigError('backupPVC must map storage class names to settings');
  const out: Record<string, BackupPvcConfig> = {};
  for (const [sc, entry] of Object.entries(v)) {
    const where = `backupPVC.${sc}`;
    if (!isObject(entry)) throw new NodeAgentConfigError(`${where} must be an object`);
    const storageClass = optionalString(entry.storageClass, `${where}.storageClass`);
    const readOnly = optionalBoolean(entry.readOnly, `${where}.readOnly`);
    const spcNoRelabeling = optionalBoolean(entry.spcNoRelabeling, `${where}.spcNoRelabeling`);
    const annotations = entry.annotations;
    if (annotations !== undefined && annotations !== null && (!isObject(annotations) || Object.values(annotations).some((x) => typeof x !== 'string'))) {
      throw new NodeAgentConfigError(`${where}.annotations must map annotation keys to strings`);
    }
    out[sc] = {
      ...(storageClass !== undefined ? { storageClass } : {}),
      ...(readOnly !== undefined ? { readOnly } : {}),
      // As in Velero, it means something only for a read-only backup PVC (reported otherwise: readNodeAgentConfig).
      ...(spcNoRelabeling !== undefined && readOnly === true ? { spcNoRelabeling } : {}),
      ...(isObject(annotations) ? { annotations: annotations as Record<string, string> } : {}),
    };
  }
  return out;
}

/** The class the backup PVC of a volume of `sourceClass` is made in: `backupPVC`'s for that class, else the same. */
export function backupPvcClass(config: Pick<NodeAgentConfig, 'backupPVC'>, sourceClass: string): string {
  return config.backupPVC?.[sourceClass]?.storageClass || sourceClass;
}

const NODE_SELECTOR_OPERATORS: ReadonlySet<string> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/**
 * A label selector of the ConfigMap (a loadAffinity entry's or a perNodeConfig rule's nodeSelector), checked as the API
 * server checks one: a selector it would refuse must not quietly match no node (a per-node rule would then never
 * apply, an affinity never claim).
 */
function parseNodeSelector(selector: unknown, where: string): LabelSelectorLike {
  if (!isObject(selector)) throw new NodeAgentConfigError(`${where} must be a label selector`);
  const { matchLabels, matchExpressions } = selector;
  if (matchLabels !== undefined && matchLabels !== null) {
    if (!isObject(matchLabels) || Object.values(matchLabels).some((x) => typeof x !== 'string')) throw new NodeAgentConfigError(`${where}.matchLabels must map label keys to strings`);
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) throw new NodeAgentConfigError(`${where}.matchExpressions must be a list`);
    matchExpressions.forEach((req: unknown, j) => {
      const at = `${where}.matchExpressions[${j}]`;
      if (!isObject(req) || typeof req.key !== 'string' || req.key === '') throw new NodeAgentConfigError(`${at} must have a key`);
      if (typeof req.operator !== 'string' || !NODE_SELECTOR_OPERATORS.has(req.operator)) {
        throw new NodeAgentConfigError(`${at}.operator must be one of ${[...NODE_SELECTOR_OPERATORS].join(', ')} (got ${JSON.stringify(req.operator)})`);
      }
      const values = req.values ?? [];
      if (!Array.isArray(values) || values.some((x) => typeof x !== 'string')) throw new NodeAgentConfigError(`${at}.values must be a list of strings`);
      const needsValues = req.operator === 'In' || req.operator === 'NotIn';
      if (needsValues !== values.length > 0) throw new NodeAgentConfigError(`${at}: ${req.operator} ${needsValues ? 'needs values' : 'takes no values'}`);
    });
  }
  return selector as LabelSelectorLike;
}

function parseLoadAffinity(v: unknown): LoadAffinity[] {
  if (!Array.isArray(v)) throw new NodeAgentConfigError('loadAffinity must be a list');
  return v.map((entry: unknown, i) => {
    const where = `loadAffinity[${i}]`;
    if (!isObject(entry)) throw new NodeAgentConfigError(`${where} must be an object`);
    const nodeSelector = parseNodeSelector(entry.nodeSelector, `${where}.nodeSelector`);
    const storageClass = optionalString(entry.storageClass, `${where}.storageClass`);
    return { nodeSelector, ...(storageClass !== undefined ? { storageClass } : {}) };
  });
}

/**
 * The load affinity that applies to a volume of `storageClass` (Velero's rule): the entry naming that class, else
 * the first entry naming none; undefined when neither exists (any node may move it).
 */
export function loadAffinityFor(entries: readonly LoadAffinity[] | undefined, storageClass: string | undefined): LoadAffinity | undefined {
  const sc = storageClass ?? '';
  let global: LoadAffinity | undefined;
  for (const entry of entries ?? []) {
    if ((entry.storageClass ?? '') === sc) return entry;
    if (entry.storageClass === undefined && global === undefined) global = entry;
  }
  return global;
}

export const DEFAULT_CONCURRENCY = 1;

/**
 * Data-path pods this node may run at once: the smallest positive `number` among the per-node rules whose selector
 * matches the node's labels, else a positive `globalConfig`, else 1.
 */
export function concurrencyForNode(config: NodeAgentConfig, nodeLabels: Record<string, string> | undefined): number {
  const lc = config.loadConcurrency;
  const matching = (lc?.perNodeConfig ?? []).filter((r) => r.number > 0 && matchesLabelSelector(nodeLabels, r.nodeSelector)).map((r) => r.number);
  if (matching.length > 0) return Math.min(...matching);
  if (lc?.globalConfig && lc.globalConfig > 0) return lc.globalConfig;
  return DEFAULT_CONCURRENCY;
}

/** Cluster-wide bound on PVBs/PVRs being prepared at once (label expose-on-going); 0 = no bound. */
export function prepareQueueLength(config: NodeAgentConfig): number {
  const n = config.loadConcurrency?.prepareQueueLength ?? 0;
  return n > 0 ? n : 0;
}

/** `podResources` as a container's resources; empty values are left out. */
export function hostingPodResources(config: NodeAgentConfig): V1ResourceRequirements | undefined {
  const pr = config.podResources;
  if (!pr) return undefined;
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (pr.cpuRequest) requests.cpu = pr.cpuRequest;
  if (pr.memoryRequest) requests.memory = pr.memoryRequest;
  if (pr.cpuLimit) limits.cpu = pr.cpuLimit;
  if (pr.memoryLimit) limits.memory = pr.memoryLimit;
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) return undefined;
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}
