/**
 * Velero's resource modifiers (`restore create --resource-modifier-configmap`): a ConfigMap in the install namespace
 * with exactly one data key holding YAML of `version: v1` and `resourceModifierRules`, each with `conditions`
 * (`groupResource` glob, `resourceNameRegex`, `namespaces`, `labelSelector`, `matches` of JSON pointer and value)
 * and one kind of patch: `patches` (JSON Patch, RFC 6902, values written as Velero reads them), `mergePatches`
 * (JSON Merge Patch, RFC 7386) or `strategicPatches` (./strategic-merge.ts). Parsing is strict (unknown keys are
 * errors, with their line). Every rule whose conditions match the item as it was before any rule changed it is
 * applied, in order. Pure.
 */
import jsonPatch from 'fast-json-patch';
import mergePatch from 'json-merge-patch';
import { isScalar, parse as parseYaml, type Node as YamlNode } from 'yaml';
import { YamlReader, parseSingleKeyConfigMap, readVersionedTop } from '../yaml-reader.js';
import { globPattern, matchesLabelSelector } from '../../api/index.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { strategicMerge } from './strategic-merge.js';

export const SUPPORTED_MODIFIER_VERSION = 'v1';
const JSON_PATCH_OPERATIONS = ['add', 'remove', 'replace', 'test', 'move', 'copy'] as const;
type JsonPatchOperation = (typeof JSON_PATCH_OPERATIONS)[number];

export interface JsonPatchEntry {
  operation: JsonPatchOperation;
  path: string;
  from?: string;
  /** As written (a string); read as Velero does: JSON numbers, booleans, null, objects and arrays unquoted. */
  value?: string;
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface ModifierRule {
  /** 1-based position, for messages. */
  index: number;
  conditions: {
    groupResource: string;
    resourceNameRegex?: RegExp;
    namespaces?: string[];
    labelSelector?: LabelSelector;
    matches?: { path: string; value: string }[];
  };
  patches?: JsonPatchEntry[];
  mergePatches?: object[];
  strategicPatches?: object[];
}

export interface ResourceModifiers {
  /** `ConfigMap velero/my-modifiers`. */
  source: string;
  rules: ModifierRule[];
}

export class ResourceModifiersError extends Error {}

const TOP_KEYS = ['version', 'resourceModifierRules'];
const RULE_KEYS = ['conditions', 'patches', 'mergePatches', 'strategicPatches'];
const CONDITION_KEYS = ['namespaces', 'groupResource', 'resourceNameRegex', 'labelSelector', 'matches'];
const MATCH_KEYS = ['path', 'value'];
const PATCH_KEYS = ['operation', 'from', 'path', 'value'];
const PATCH_DATA_KEYS = ['patchData'];
const SELECTOR_KEYS = ['matchLabels', 'matchExpressions'];

/** The fields of resource modifiers. */
class Reader extends YamlReader {
  /** A scalar as Go's YAML-to-JSON would give it to a string field: text as written. */
  string(node: YamlNode | null | undefined, what: string): string {
    if (!isScalar(node)) this.fail(node, `${what} must be a string`);
    return node.source !== undefined ? String(node.source) : String(node.value);
  }
}

function parseRule(r: Reader, node: YamlNode, i: number): ModifierRule {
  const where = `resourceModifierRules[${i}]`;
  const m = r.map(node, where, RULE_KEYS);
  const c = r.map(m.get('conditions'), `${where}.conditions`, CONDITION_KEYS);
  const grNode = c.get('groupResource');
  const groupResource = grNode ? r.string(grNode, `${where}.conditions.groupResource`) : '';
  if (!groupResource) r.fail(m.get('conditions'), `${where}: groupResource cannot be empty`);
  const rule: ModifierRule = { index: i + 1, conditions: { groupResource } };
  const regex = c.get('resourceNameRegex');
  if (regex) {
    const text = r.string(regex, `${where}.conditions.resourceNameRegex`);
    try {
      rule.conditions.resourceNameRegex = new RegExp(text);
    } catch (err) {
      r.fail(regex, `${where}.conditions.resourceNameRegex: ${(err as Error).message}`);
    }
  }
  const namespaces = c.get('namespaces');
  if (namespaces) rule.conditions.namespaces = r.list(namespaces, `${where}.conditions.namespaces`).map((n) => r.string(n, `${where}.conditions.namespaces`));
  const selector = c.get('labelSelector');
  if (selector) {
    r.map(selector, `${where}.conditions.labelSelector`, SELECTOR_KEYS);
    rule.conditions.labelSelector = selector.toJSON() as LabelSelector;
    for (const e of rule.conditions.labelSelector.matchExpressions ?? []) {
      if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator)) r.fail(selector, `${where}.conditions.labelSelector: "${e.operator}" is not a valid label selector operator`);
    }
  }
  const matches = c.get('matches');
  if (matches) {
    rule.conditions.matches = r.list(matches, `${where}.conditions.matches`).map((n) => {
      const mm = r.map(n, `${where}.conditions.matches`, MATCH_KEYS);
      const path = mm.get('path') ? r.string(mm.get('path'), 'path') : '';
      if (!path) r.fail(n, `${where}.conditions.matches: path is required for match rule`);
      return { path, value: mm.get('value') ? r.string(mm.get('value'), 'value') : '' };
    });
  }
  const kinds = (['patches', 'mergePatches', 'strategicPatches'] as const).filter((k) => m.get(k) && r.list(m.get(k), `${where}.${k}`).length > 0);
  if (kinds.length > 1) r.fail(node, `${where}: only one of patches, mergePatches, strategicPatches can be specified`);
  if (m.get('patches')) {
    rule.patches = r.list(m.get('patches'), `${where}.patches`).map((n) => {
      const p = r.map(n, `${where}.patches`, PATCH_KEYS);
      const op = p.get('operation') ? r.string(p.get('operation'), 'operation') : '';
      if (!op) r.fail(n, `${where}.patches: operation cannot be empty`);
      if (!(JSON_PATCH_OPERATIONS as readonly string[]).includes(op.toLowerCase())) r.fail(p.get('operation'), `${where}.patches: unsupported operation ${op}`);
      const path = p.get('path') ? r.string(p.get('path'), 'path') : '';
      if (!path) r.fail(n, `${where}.patches: path cannot be empty`);
      return {
        operation: op.toLowerCase() as JsonPatchOperation,
        path,
        ...(p.get('from') ? { from: r.string(p.get('from'), 'from') } : {}),
        ...(p.get('value') ? { value: r.string(p.get('value'), 'value') } : {}),
      };
    });
  }
  for (const kind of ['mergePatches', 'strategicPatches'] as const) {
    if (!m.get(kind)) continue;
    rule[kind] = r.list(m.get(kind), `${where}.${kind}`).map((n) => {
      const p = r.map(n, `${where}.${kind}`, PATCH_DATA_KEYS);
      const dataNode = p.get('patchData');
      const text = dataNode ? r.string(dataNode, 'patchData') : '';
      let data: unknown;
      try {
        data = parseYaml(text);
      } catch (err) {
        r.fail(dataNode, `${where}.${kind}: patchData is not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
      }
      if (typeof data !== 'object' || data === null || Array.isArray(data)) r.fail(dataNode, `${where}.${kind}: patchData must be an object`);
      return data as object;
    });
  }
  return rule;
}

export function parseResourceModifiers(text: string, source: string): ResourceModifiers {
  const { r, node, top, version, versionNode } = readVersionedTop(text, { Reader, ErrorClass: ResourceModifiersError, what: 'the resource modifiers', keys: TOP_KEYS });
  if (version.toLowerCase() !== SUPPORTED_MODIFIER_VERSION) r.fail(versionNode ?? node, `unsupported resource modifier version ${version || '(none)'}`);
  const rulesNode = top.get('resourceModifierRules');
  const rules = rulesNode ? r.list(rulesNode, 'resourceModifierRules') : [];
  if (!rules.length) r.fail(rulesNode ?? node, 'resource modifier rules cannot be empty');
  return { source, rules: rules.map((n, i) => parseRule(r, n, i)) };
}

export function resourceModifiersFromConfigMap(cm: { metadata?: { name?: string; namespace?: string }; data?: Record<string, string> | undefined }): ResourceModifiers {
  return parseSingleKeyConfigMap(cm, { holding: 'resource modifiers', ErrorClass: ResourceModifiersError, parse: parseResourceModifiers });
}

// ---- applying ------------------------------------------------------------------------------------------------

/** Velero's reading of a patch value: quoted text is a string; null, booleans, numbers, objects and arrays are JSON. */
export function patchValue(text: string | undefined): unknown {
  const v = text ?? '';
  if (v === '') return '';
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1);
  if (v === 'null') return null;
  if (v.toLowerCase() === 'true') return true;
  if (v.toLowerCase() === 'false') return false;
  if (v.startsWith('{') || v.startsWith('[')) return JSON.parse(v) as unknown;
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v.trim())) return Number(v);
  return v;
}

/** `groupResource` as a glob with '.' as separator (gobwas/glob): `*` stays within a segment, `**` crosses them. */
export function groupResourceMatches(pattern: string, groupResource: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^.]*';
    else if (c === '?') re += '[^.]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(groupResource);
}

function namespaceMatches(patterns: readonly string[] | undefined, namespace: string): boolean {
  if (!patterns?.length || patterns.includes('*')) return true;
  return patterns.some((p) => p === namespace || (globPattern(p)?.test(namespace) ?? false));
}

function jsonPatchOps(entries: readonly JsonPatchEntry[]): jsonPatch.Operation[] {
  return entries.map((e) => {
    switch (e.operation) {
      case 'remove':
        return { op: 'remove', path: e.path };
      case 'move':
      case 'copy':
        return { op: e.operation, from: e.from ?? '', path: e.path };
      default:
        return { op: e.operation, path: e.path, value: patchValue(e.value) };
    }
  });
}

/** Whether every `matches` entry holds (a JSON Patch test); a missing path is no match. */
function matchesHold(obj: UnstructuredObject, matches: readonly { path: string; value: string }[] | undefined): boolean {
  if (!matches?.length) return true;
  try {
    jsonPatch.applyPatch(obj, jsonPatchOps(matches.map((m) => ({ operation: 'test', path: m.path, value: m.value }))), true, false);
    return true;
  } catch {
    return false;
  }
}

export function ruleMatches(rule: ModifierRule, obj: UnstructuredObject, groupResource: string): boolean {
  const ns = obj.metadata.namespace;
  if (ns && !namespaceMatches(rule.conditions.namespaces, ns)) return false;
  if (!groupResourceMatches(rule.conditions.groupResource, groupResource)) return false;
  if (rule.conditions.resourceNameRegex && !rule.conditions.resourceNameRegex.test(obj.metadata.name)) return false;
  if (rule.conditions.labelSelector && !matchesLabelSelector(obj.metadata.labels, rule.conditions.labelSelector)) return false;
  return matchesHold(obj, rule.conditions.matches);
}

export interface ModifierOutcome {
  object: UnstructuredObject;
  /** Rules applied, e.g. `rule #1 of ConfigMap velero/m (JSON patch)`. */
  applied: string[];
  /** A rule whose patch could not be applied: the item is restored without that rule's change. */
  errors: string[];
}

/**
 * Applies every matching rule in order. Conditions are judged on the item as it came in (Velero keeps the original
 * for matching); a JSON Patch whose own `test` fails leaves the item as it is (not an error, as in Velero).
 */
export function applyResourceModifiers(modifiers: ResourceModifiers, obj: UnstructuredObject, groupResource: string): ModifierOutcome {
  const origin = structuredClone(obj);
  let current = obj;
  const out: ModifierOutcome = { object: obj, applied: [], errors: [] };
  for (const rule of modifiers.rules) {
    if (!ruleMatches(rule, origin, groupResource)) continue;
    const name = `rule #${rule.index} of ${modifiers.source}`;
    try {
      if (rule.patches?.length) {
        try {
          current = jsonPatch.applyPatch(current, jsonPatchOps(rule.patches), true, false).newDocument;
        } catch (err) {
          if ((err as { name?: string }).name === 'TEST_OPERATION_FAILED') continue;
          throw err;
        }
        out.applied.push(`${name} (JSON patch)`);
      } else if (rule.mergePatches?.length) {
        for (const p of rule.mergePatches) current = mergePatch.apply(structuredClone(current), p) as UnstructuredObject;
        out.applied.push(`${name} (JSON merge patch)`);
      } else if (rule.strategicPatches?.length) {
        for (const p of rule.strategicPatches) current = strategicMerge(current, p);
        out.applied.push(`${name} (strategic merge patch)`);
      }
    } catch (err) {
      out.errors.push(`error applying ${name} to ${groupResource} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}: ${((err as Error).message ?? String(err)).split('\n')[0]}`);
    }
  }
  out.object = current;
  return out;
}
