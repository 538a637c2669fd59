/**
 * Velero's resource policies (`backup create --resource-policies-configmap`): a ConfigMap in the install namespace
 * with exactly one data key holding YAML of `version: v1`, `volumePolicies` (conditions and an action) and
 * `includeExcludePolicy` (scoped resource filters). Parsing is as strict as Velero's (unknown keys are errors) and
 * every error names its line. A volume matches a policy when every condition given matches; the first matching
 * policy wins. Pure.
 */
import { isMap, isScalar, isSeq, type Node as YamlNode } from 'yaml';
import { YamlReader, parseSingleKeyConfigMap, readVersionedTop } from '../yaml-reader.js';
import { quantityBytes } from '../csi/snapshot-objects.js';

export const VOLUME_POLICY_ACTIONS = ['skip', 'fs-backup', 'snapshot'] as const;
export type VolumePolicyAction = (typeof VOLUME_POLICY_ACTIONS)[number];
export const SUPPORTED_POLICY_VERSION = 'v1';

export interface CapacityRange {
  /** Bytes; 0 = no lower bound. */
  lower: number;
  /** Bytes; 0 = no upper bound. */
  upper: number;
}

export interface VolumeConditions {
  capacity?: CapacityRange;
  storageClass?: string[];
  nfs?: { server?: string; path?: string };
  csi?: { driver?: string; volumeAttributes?: Record<string, string> };
  volumeTypes?: string[];
  pvcLabels?: Record<string, string>;
  /** Velero 1.18's condition (the PVC's status.phase), accepted here already. */
  pvcPhase?: string[];
}

export interface VolumePolicy {
  /** 1-based position in `volumePolicies`, for messages. */
  index: number;
  conditions: VolumeConditions;
  action: { type: VolumePolicyAction; parameters?: Record<string, unknown> };
}

export interface IncludeExcludePolicy {
  includedClusterScopedResources: string[];
  excludedClusterScopedResources: string[];
  includedNamespaceScopedResources: string[];
  excludedNamespaceScopedResources: string[];
}

export interface ResourcePolicies {
  /** Where they came from, for messages: `ConfigMap velero/my-policies`. */
  source: string;
  volumePolicies: VolumePolicy[];
  includeExcludePolicy?: IncludeExcludePolicy;
}

/** The verdict for one volume: the first policy that matched and its action. */
export interface VolumePolicyMatch {
  action: VolumePolicyAction;
  /** `volume policy #2 of ConfigMap velero/my-policies`. */
  policy: string;
}

export class ResourcePoliciesError extends Error {}

const TOP_KEYS = ['version', 'volumePolicies', 'includeExcludePolicy'];
const POLICY_KEYS = ['conditions', 'action'];
const CONDITION_KEYS = ['capacity', 'storageClass', 'nfs', 'csi', 'volumeTypes', 'pvcLabels', 'pvcPhase'];
const ACTION_KEYS = ['type', 'parameters'];
const NFS_KEYS = ['server', 'path'];
const CSI_KEYS = ['driver', 'volumeAttributes'];
const INCLUDE_EXCLUDE_KEYS = ['includedClusterScopedResources', 'excludedClusterScopedResources', 'includedNamespaceScopedResources', 'excludedNamespaceScopedResources'];

/** A policy's fields: a string field takes a string or a number, as Go's YAML decoding into a string does. */
class Reader extends YamlReader {
  string(node: YamlNode | null | undefined, what: string): string {
    if (!isScalar(node) || (typeof node.value !== 'string' && typeof node.value !== 'number')) this.fail(node, `${what} must be a string`);
    return String(node.value);
  }

  strings(node: YamlNode | null | undefined, what: string): string[] {
    if (!isSeq(node)) this.fail(node, `${what} must be a list of strings`);
    return node.items.map((i) => this.string(i as YamlNode, `each entry of ${what}`));
  }

  stringMap(node: YamlNode | null | undefined, what: string): Record<string, string> {
    if (!isMap(node)) this.fail(node, `${what} must be a map of string to string`);
    const out: Record<string, string> = {};
    for (const pair of node.items) out[this.string(pair.key as YamlNode, `a key of ${what}`)] = this.string(pair.value as YamlNode, `${what}.${String((pair.key as { value?: unknown }).value)}`);
    return out;
  }
}

/** Velero's capacity text `"<lower>,<upper>"` (either side may be empty, meaning no bound). */
export function parseCapacity(text: string): CapacityRange | string {
  const parts = text.split(',');
  if (parts.length !== 2) return `wrong format of capacity "${text}" (expected "<lower>,<upper>", e.g. "10Gi,100Gi")`;
  const bounds = parts.map((p) => (p.trim() === '' ? 0 : quantityBytes(p.trim())));
  const bad = parts.find((_, i) => bounds[i] === undefined);
  if (bad !== undefined) return `wrong format of capacity "${text}": "${bad.trim()}" is not a quantity`;
  const [lower, upper] = bounds as [number, number];
  if (!(upper >= lower || (lower !== 0 && upper === 0))) return `illegal values for capacity "${text}": the upper bound is below the lower one`;
  return { lower, upper };
}

function parseConditions(r: Reader, node: YamlNode | null | undefined, where: string): VolumeConditions {
  if (node === null || node === undefined) return {};
  const m = r.map(node, `${where}.conditions`, CONDITION_KEYS);
  const c: VolumeConditions = {};
  for (const [key, value] of m) {
    const what = `${where}.conditions.${key}`;
    if (value === null) continue;
    switch (key) {
      case 'capacity': {
        const range = parseCapacity(r.string(value, what));
        if (typeof range === 'string') r.fail(value, range);
        c.capacity = range;
        break;
      }
      case 'storageClass':
        c.storageClass = r.strings(value, what);
        break;
      case 'volumeTypes':
        c.volumeTypes = r.strings(value, what);
        break;
      case 'pvcPhase':
        c.pvcPhase = r.strings(value, what);
        break;
      case 'pvcLabels':
        c.pvcLabels = r.stringMap(value, what);
        break;
      case 'nfs': {
        const n = r.map(value, what, NFS_KEYS);
        c.nfs = {};
        if (n.get('server')) c.nfs.server = r.string(n.get('server'), `${what}.server`);
        if (n.get('path')) c.nfs.path = r.string(n.get('path'), `${what}.path`);
        break;
      }
      case 'csi': {
        const n = r.map(value, what, CSI_KEYS);
        c.csi = {};
        if (n.get('driver')) c.csi.driver = r.string(n.get('driver'), `${what}.driver`);
        if (n.get('volumeAttributes')) c.csi.volumeAttributes = r.stringMap(n.get('volumeAttributes'), `${what}.volumeAttributes`);
        if (!c.csi.driver && c.csi.volumeAttributes) r.fail(value, `${what}: the csi driver must be given when filtering by volume attributes`);
        break;
      }
    }
  }
  return c;
}

function parseAction(r: Reader, node: YamlNode | null | undefined, where: string): VolumePolicy['action'] {
  const m = r.map(node, `${where}.action`, ACTION_KEYS);
  const typeNode = m.get('type');
  const type = r.string(typeNode, `${where}.action.type`);
  if (!(VOLUME_POLICY_ACTIONS as readonly string[]).includes(type)) r.fail(typeNode, `invalid action type ${type} in ${where} (one of ${VOLUME_POLICY_ACTIONS.join(', ')})`);
  const params = m.get('parameters');
  if (params && !isMap(params)) r.fail(params, `${where}.action.parameters must be a mapping`);
  return { type: type as VolumePolicyAction, ...(params ? { parameters: (params.toJSON() ?? {}) as Record<string, unknown> } : {}) };
}

function parseIncludeExclude(r: Reader, node: YamlNode | null | undefined): IncludeExcludePolicy {
  const m = r.map(node, 'includeExcludePolicy', INCLUDE_EXCLUDE_KEYS);
  const list = (k: string) => (m.get(k) ? r.strings(m.get(k), `includeExcludePolicy.${k}`) : []);
  const p: IncludeExcludePolicy = {
    includedClusterScopedResources: list('includedClusterScopedResources'),
    excludedClusterScopedResources: list('excludedClusterScopedResources'),
    includedNamespaceScopedResources: list('includedNamespaceScopedResources'),
    excludedNamespaceScopedResources: list('excludedNamespaceScopedResources'),
  };
  for (const [inc, exc] of [
    [p.includedClusterScopedResources, p.excludedClusterScopedResources],
    [p.includedNamespaceScopedResources, p.excludedNamespaceScopedResources],
  ] as const) {
    if (inc.includes('*') || exc.includes('*')) r.fail(node, "includeExcludePolicy: cannot use '*' in includes or excludes filters in the policy");
    const both = exc.find((e) => inc.includes(e));
    if (both) r.fail(node, `includeExcludePolicy: excludes list cannot contain an item in the includes list: ${both}`);
  }
  return p;
}

/** Parses the YAML text of resource policies; throws ResourcePoliciesError with the line of the problem. */
export function parseResourcePolicies(text: string, source: string): ResourcePolicies {
  const { r, node, top, version, versionNode } = readVersionedTop(text, { Reader, ErrorClass: ResourcePoliciesError, what: 'the resource policies', keys: TOP_KEYS });
  if (version !== SUPPORTED_POLICY_VERSION) r.fail(versionNode ?? node, `incompatible version number ${version || '(none)'} with supported version ${SUPPORTED_POLICY_VERSION}`);
  const out: ResourcePolicies = { source, volumePolicies: [] };
  const list = top.get('volumePolicies');
  if (list) {
    r.list(list, 'volumePolicies').forEach((item, i) => {
      const where = `volumePolicies[${i}]`;
      const p = r.map(item as YamlNode, where, POLICY_KEYS);
      if (!p.get('action')) r.fail(item as YamlNode, `${where} has no action`);
      out.volumePolicies.push({ index: i + 1, conditions: parseConditions(r, p.get('conditions'), where), action: parseAction(r, p.get('action'), where) });
    });
  }
  const ie = top.get('includeExcludePolicy');
  if (ie) out.includeExcludePolicy = parseIncludeExclude(r, ie);
  return out;
}

/** The policies of a ConfigMap: its single data key (Velero refuses a ConfigMap with more or fewer). */
export function resourcePoliciesFromConfigMap(cm: { metadata?: { name?: string; namespace?: string }; data?: Record<string, string> | undefined }): ResourcePolicies {
  return parseSingleKeyConfigMap(cm, { holding: 'policies', ErrorClass: ResourcePoliciesError, parse: parseResourcePolicies });
}

// ---- matching ------------------------------------------------------------------------------------------------

/** What the conditions look at, from a PV (and its claim) or a pod volume (and its claim). */
export interface VolumeFacts {
  capacityBytes: number;
  storageClass: string;
  nfs?: { server?: string; path?: string } | undefined;
  csi?: { driver?: string; volumeAttributes?: Record<string, string> } | undefined;
  volumeType: string;
  pvcLabels?: Record<string, string> | undefined;
  pvcPhase?: string | undefined;
}

/** Velero's volume type names, in its order of precedence (the first source set decides). */
const PV_TYPES = [
  'awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'csi', 'fc', 'flocker', 'flexVolume', 'gcePersistentDisk', 'glusterfs',
  'hostPath', 'iscsi', 'local', 'nfs', 'photonPersistentDisk', 'portworxVolume', 'quobyte', 'rbd', 'scaleIO', 'storageos', 'vsphereVolume',
] as const;
const POD_VOLUME_TYPES = [
  'awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'csi', 'fc', 'flocker', 'flexVolume', 'gcePersistentDisk', 'gitRepo',
  'glusterfs', 'iscsi', 'nfs', 'secret', 'rbd', 'downwardAPI', 'configMap', 'projected', 'ephemeral', 'photonPersistentDisk', 'portworxVolume',
  'quobyte', 'scaleIO', 'storageos', 'vsphereVolume', 'hostPath', 'emptyDir',
] as const;
/** The API field names whose Velero type name differs (`storageos` → `storageOS`). */
const TYPE_NAME: Record<string, string> = { storageos: 'storageOS' };

export interface PersistentVolumeFacts {
  spec?: {
    capacity?: Record<string, string | number>;
    storageClassName?: string;
    nfs?: { server?: string; path?: string };
    csi?: { driver?: string; volumeAttributes?: Record<string, string> };
    [source: string]: unknown;
  };
}

export interface ClaimFacts {
  metadata?: { labels?: Record<string, string> };
  status?: { phase?: string };
}

function claimFacts(pvc: ClaimFacts | undefined): Pick<VolumeFacts, 'pvcLabels' | 'pvcPhase'> {
  const labels = pvc?.metadata?.labels;
  return { ...(labels && Object.keys(labels).length ? { pvcLabels: labels } : {}), ...(pvc?.status?.phase ? { pvcPhase: pvc.status.phase } : {}) };
}

export function persistentVolumeFacts(pv: PersistentVolumeFacts | undefined, pvc?: ClaimFacts): VolumeFacts {
  const spec = pv?.spec ?? {};
  const type = PV_TYPES.find((t) => spec[t] !== undefined && spec[t] !== null);
  return {
    capacityBytes: quantityBytes(spec.capacity?.storage) ?? 0,
    storageClass: spec.storageClassName ?? '',
    ...(spec.nfs ? { nfs: { server: spec.nfs.server ?? '', path: spec.nfs.path ?? '' } } : {}),
    ...(spec.csi ? { csi: { driver: spec.csi.driver ?? '', volumeAttributes: spec.csi.volumeAttributes ?? {} } } : {}),
    volumeType: type ? (TYPE_NAME[type] ?? type) : '',
    ...claimFacts(pvc),
  };
}

export function podVolumeFacts(volume: Record<string, unknown>, pvc?: ClaimFacts): VolumeFacts {
  const type = POD_VOLUME_TYPES.find((t) => volume[t] !== undefined && volume[t] !== null);
  const nfs = volume.nfs as { server?: string; path?: string } | undefined;
  const csi = volume.csi as { driver?: string; volumeAttributes?: Record<string, string> } | undefined;
  return {
    capacityBytes: 0,
    storageClass: '',
    ...(nfs ? { nfs: { server: nfs.server ?? '', path: nfs.path ?? '' } } : {}),
    ...(csi ? { csi: { driver: csi.driver ?? '', volumeAttributes: csi.volumeAttributes ?? {} } } : {}),
    volumeType: type ? (TYPE_NAME[type] ?? type) : '',
    ...claimFacts(pvc),
  };
}

function capacityMatches(range: CapacityRange | undefined, bytes: number): boolean {
  if (!range) return true;
  if (range.lower === 0 && range.upper >= bytes) return true;
  if (range.upper === 0 && range.lower <= bytes) return true;
  if (range.lower !== 0 && range.upper !== 0) return range.lower <= bytes && range.upper >= bytes;
  return false;
}

function nfsMatches(want: VolumeConditions['nfs'], v: VolumeFacts): boolean {
  if (!want) return true;
  if (!v.nfs) return false;
  if (want.server && want.server !== v.nfs.server) return false;
  if (want.path && want.path !== v.nfs.path) return false;
  return true;
}

function csiMatches(want: VolumeConditions['csi'], v: VolumeFacts): boolean {
  if (!want) return true;
  if (!want.driver) return Boolean(v.csi);
  if (!v.csi || v.csi.driver !== want.driver) return false;
  return Object.entries(want.volumeAttributes ?? {}).every(([k, value]) => v.csi?.volumeAttributes?.[k] === value);
}

/** Whether every condition of a policy matches the volume (Velero's rules, one function per condition). */
export function conditionsMatch(c: VolumeConditions, v: VolumeFacts): boolean {
  if (!capacityMatches(c.capacity, v.capacityBytes)) return false;
  if (c.storageClass?.length && !(v.storageClass && c.storageClass.includes(v.storageClass))) return false;
  if (!nfsMatches(c.nfs, v)) return false;
  if (!csiMatches(c.csi, v)) return false;
  if (c.volumeTypes?.length && !c.volumeTypes.includes(v.volumeType)) return false;
  if (c.pvcLabels && Object.keys(c.pvcLabels).length && !Object.entries(c.pvcLabels).every(([k, value]) => v.pvcLabels?.[k] === value)) return false;
  if (c.pvcPhase?.length && !(v.pvcPhase && c.pvcPhase.includes(v.pvcPhase))) return false;
  return true;
}

/** The first policy whose conditions all match, as a verdict; undefined when none does. */
export function matchVolumePolicy(policies: ResourcePolicies | undefined, v: VolumeFacts): VolumePolicyMatch | undefined {
  const p = policies?.volumePolicies.find((x) => conditionsMatch(x.conditions, v));
  return p && policies ? { action: p.action.type, policy: `volume policy #${p.index} of ${policies.source}` } : undefined;
}

/** Whether any policy could ask for a snapshot (then snapshots are considered even with snapshotVolumes false). */
export function anyPolicySnapshots(policies: ResourcePolicies | undefined): boolean {
  return Boolean(policies?.volumePolicies.some((p) => p.action.type === 'snapshot'));
}
