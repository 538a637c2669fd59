/**
 * What to do when an object being restored already exists (docs/restore.md, `existingResourcePolicy`).
 * "The same" means every field of the object from the backup has that value in the cluster: fields the cluster
 * added (defaults, a node name, an allocated IP) do not make it different. Velero compares whole objects instead,
 * which warns about almost every Service and Pod.
 */
import { Labels, type ExistingResourcePolicy } from '../../api/index.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { resetMetadataAndStatus } from './sanitize.js';

export type ExistingDecision =
  /** Same as the backup; `patch` (policy update) puts the backup/restore labels on it. */
  | { action: 'unchanged'; patch?: object }
  | { action: 'patch'; patch: object; reason: string }
  | { action: 'warn'; message: string };

type Json = unknown;

function isPlainObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Every field of `want` has the same value in `have` (objects recursively; arrays element by element, same length). */
export function isSubset(want: Json, have: Json): boolean {
  if (isPlainObject(want)) return isPlainObject(have) && Object.entries(want).every(([k, v]) => isSubset(v, have[k]));
  if (Array.isArray(want)) return Array.isArray(have) && want.length === have.length && want.every((v, i) => isSubset(v, have[i]));
  return deepEqual(want, have);
}

/** Maps whose keys the update policy may remove; anything else the backup lacks is left as the cluster has it. */
const REMOVABLE_KEY_MAPS = new Set(['metadata.labels', 'metadata.annotations', 'data', 'binaryData', 'stringData']);

/** RFC 7386 merge patch turning `from` into `to`, removing keys only inside REMOVABLE_KEY_MAPS. */
export function createMergePatch(from: Json, to: Json, path = ''): Record<string, Json> | undefined {
  if (!isPlainObject(from) || !isPlainObject(to)) return undefined;
  const patch: Record<string, Json> = {};
  for (const [k, v] of Object.entries(to)) {
    const sub = path ? `${path}.${k}` : k;
    if (isPlainObject(v) && isPlainObject(from[k])) {
      const p = createMergePatch(from[k], v, sub);
      if (p && Object.keys(p).length) patch[k] = p;
    } else if (!deepEqual(from[k], v)) {
      patch[k] = v;
    }
  }
  if (REMOVABLE_KEY_MAPS.has(path)) for (const k of Object.keys(from)) if (!Object.hasOwn(to, k)) patch[k] = null;
  return patch;
}

function withoutRestoreLabels(obj: UnstructuredObject): UnstructuredObject {
  const copy = structuredClone(obj);
  const labels = { ...(copy.metadata.labels ?? {}) };
  delete labels[Labels.BackupName];
  delete labels[Labels.RestoreName];
  copy.metadata.labels = labels;
  if (Object.keys(labels).length === 0) delete copy.metadata.labels;
  return copy;
}

function labelsPatch(desired: UnstructuredObject, inCluster: UnstructuredObject): object | undefined {
  const want = { [Labels.BackupName]: desired.metadata.labels?.[Labels.BackupName], [Labels.RestoreName]: desired.metadata.labels?.[Labels.RestoreName] };
  const have = inCluster.metadata.labels ?? {};
  const changed = Object.entries(want).filter(([k, v]) => v !== undefined && have[k] !== v);
  return changed.length ? { metadata: { labels: Object.fromEntries(changed) } } : undefined;
}

/** Velero's service-account merge: union of secrets and image pull secrets, labels and annotations added. */
function serviceAccountMergePatch(desired: UnstructuredObject, inCluster: UnstructuredObject): object {
  const union = (a: Json, b: Json) => {
    const list = [...(Array.isArray(b) ? b : []), ...(Array.isArray(a) ? a : [])] as { name?: string }[];
    const seen = new Set<string>();
    return list.filter((x) => (x?.name && !seen.has(x.name) ? (seen.add(x.name), true) : false));
  };
  const patch: Record<string, Json> = {
    metadata: {
      labels: { ...(desired.metadata.labels ?? {}) },
      annotations: { ...(desired.metadata.annotations ?? {}) },
    },
  };
  const secrets = union(desired.secrets, inCluster.secrets);
  if (secrets.length) patch.secrets = secrets;
  const pulls = union(desired.imagePullSecrets, inCluster.imagePullSecrets);
  if (pulls.length) patch.imagePullSecrets = pulls;
  return patch;
}

export interface DecideExistingOptions {
  policy: ExistingResourcePolicy | undefined;
  /** The object as it would have been created (sanitised, actions applied, restore labels set). */
  desired: UnstructuredObject;
  /** The object as the cluster has it. */
  inCluster: UnstructuredObject;
}

export function decideExisting(opts: DecideExistingOptions): ExistingDecision {
  const { desired, inCluster, policy } = opts;
  const have = resetMetadataAndStatus(inCluster);
  const want = resetMetadataAndStatus(desired);
  if (isSubset(withoutRestoreLabels(want), have)) {
    const patch = policy === 'update' ? labelsPatch(desired, inCluster) : undefined;
    return patch ? { action: 'unchanged', patch } : { action: 'unchanged' };
  }
  if (desired.kind === 'ServiceAccount' && desired.apiVersion === 'v1') {
    return { action: 'patch', patch: serviceAccountMergePatch(want, have), reason: 'service accounts are merged' };
  }
  if (policy === 'update') {
    return { action: 'patch', patch: createMergePatch(have, want) ?? {}, reason: 'existingResourcePolicy is update' };
  }
  const what = policy === 'none' ? `${desired.kind} "${desired.metadata.name}"` : `${desired.kind}:${desired.metadata.name}`;
  return { action: 'warn', message: `could not restore, ${what} already exists. Warning: the in-cluster version is different than the backed-up version` };
}
