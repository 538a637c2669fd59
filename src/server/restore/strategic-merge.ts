/**
 * A strategic merge patch for restore resource modifiers. No maintained npm library implements Kubernetes'
 * strategic merge, so this is the documented subset (docs/resource-modifiers.md), applied to any kind without
 * reading Go struct tags:
 *   - maps merge key by key; `null` deletes a key; `$patch: replace` in a map replaces it whole, `$patch: delete`
 *     removes it;
 *   - lists of objects whose Kubernetes type has a patch merge key are merged by that key (containers, volumes,
 *     env, volumeMounts, ports, imagePullSecrets, ...): an item with the key of an existing one is merged into it,
 *     an item `{name: x, $patch: delete}` removes it, others are appended; `$patch: replace` as an item replaces
 *     the whole list;
 *   - `finalizers` merge as a set of strings; every other list is replaced, as JSON merge patch does.
 * Directives `$retainKeys`, `$deleteFromPrimitiveList`, `$setElementOrder` are refused. Pure.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** List fields merged by a key, as their Kubernetes types declare `patchMergeKey` (the key is chosen per list). */
const MERGE_KEYS: Record<string, (items: readonly JsonObject[]) => string | undefined> = {
  containers: () => 'name',
  initContainers: () => 'name',
  ephemeralContainers: () => 'name',
  volumes: () => 'name',
  env: () => 'name',
  imagePullSecrets: () => 'name',
  resourceClaims: () => 'name',
  volumeMounts: () => 'mountPath',
  volumeDevices: () => 'devicePath',
  hostAliases: () => 'ip',
  topologySpreadConstraints: () => 'topologyKey',
  conditions: () => 'type',
  ownerReferences: () => 'uid',
  // Container ports merge on containerPort, Service ports on port.
  ports: (items) => (items.some((i) => 'containerPort' in i) ? 'containerPort' : 'port'),
};
/** Lists of strings merged as sets (`patchStrategy: merge` on a primitive list). */
const SET_LISTS = new Set(['finalizers']);
const UNSUPPORTED = ['$retainKeys', '$deleteFromPrimitiveList', '$setElementOrder'];

export class StrategicMergeError extends Error {}

function checkDirectives(key: string): void {
  if (UNSUPPORTED.some((d) => key === d || key.startsWith(`${d}/`))) throw new StrategicMergeError(`the strategic merge directive ${key} is not supported`);
}

function mergeList(field: string, original: Json[], patch: Json[]): Json[] {
  if (patch.some((i) => isObject(i) && i.$patch === 'replace')) return patch.filter((i) => !(isObject(i) && i.$patch === 'replace')).map(stripDirectives);
  if (SET_LISTS.has(field) && [...original, ...patch].every((i) => typeof i === 'string')) return [...new Set([...original, ...patch])];
  const keyOf = MERGE_KEYS[field];
  const objects = [...original, ...patch].every(isObject);
  const key = keyOf && objects ? keyOf([...original, ...patch] as JsonObject[]) : undefined;
  if (!key) return patch.map(stripDirectives);
  const out = (original as JsonObject[]).map((o) => structuredClone(o));
  for (const item of patch as JsonObject[]) {
    const at = out.findIndex((o) => o[key] !== undefined && o[key] === item[key]);
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) out[at] = mergeObject(out[at] as JsonObject, item);
    else out.push(stripDirectives(item) as JsonObject);
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, value] of Object.entries(v)) {
    checkDirectives(k);
    if (k === '$patch') continue;
    if (value !== null) out[k] = stripDirectives(value);
  }
  return out;
}

function mergeObject(original: JsonObject, patch: JsonObject): JsonObject {
  if (patch.$patch === 'replace') return stripDirectives(patch) as JsonObject;
  const out: JsonObject = { ...original };
  for (const [key, value] of Object.entries(patch)) {
    checkDirectives(key);
    if (key === '$patch') {
      if (value !== 'merge') throw new StrategicMergeError(`unknown strategic merge directive $patch: ${JSON.stringify(value)}`);
      continue;
    }
    if (value === null || (isObject(value) && value.$patch === 'delete')) {
      delete out[key];
      continue;
    }
    const current = out[key];
    if (isObject(value) && isObject(current)) out[key] = mergeObject(current, value);
    else if (Array.isArray(value) && Array.isArray(current)) out[key] = mergeList(key, current, value);
    else out[key] = stripDirectives(value);
  }
  return out;
}

/** Applies a strategic merge patch (an object) to an object; neither input is changed. */
export function strategicMerge<T extends object>(original: T, patch: object): T {
  if (!isObject(patch as Json)) throw new StrategicMergeError('a strategic merge patch must be an object');
  return mergeObject(structuredClone(original) as unknown as JsonObject, patch as JsonObject) as unknown as T;
}
