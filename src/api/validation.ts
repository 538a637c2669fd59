/**
 * Runtime validation at the boundary: every velero.io object read from the cluster or from a storage location goes
 * through `parse(kind, value)` (or `parseBackup(value)` etc.) before the rest of cairn trusts its type. Unknown
 * extra fields are allowed (newer Velero versions add fields); wrong types, enum values and missing required fields
 * are not, and the error names the field: `Backup velero/b1: spec.ttl: expected duration string like "720h0m0s"`.
 */
import { Kind, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { CairnError } from '../base/errors.js';
import { Kinds, type KindName, type ObjectOf } from './kinds.js';
import { Formats } from './schema.js';

/** One problem found in an object: the field (dotted path, `[i]` for list items) and what is wrong with it. */
export interface FieldProblem {
  field: string;
  problem: string;
}

export class ValidationError extends CairnError {
  constructor(
    /** The kind that was expected, e.g. "Backup". */
    readonly kind: string,
    /** `namespace/name` of the object when it has them. */
    readonly objectName: string | undefined,
    /** Dotted path of the first bad field (e.g. "spec.ttl"); empty when the value as a whole is wrong. */
    readonly field: string,
    readonly problem: string,
    /** Every problem found, the first one being the one in the message. */
    readonly problems: readonly FieldProblem[] = [{ field, problem }],
  ) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    super(`${kind}${objectName ? ` ${objectName}` : ''}: ${field ? `${field}: ` : ''}${problem}${more}`);
  }
}

// Compiled lazily, once per schema: compiling all kinds up front would slow every CLI start.
const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>();

function compiled(schema: TSchema): TypeCheck<TSchema> {
  let checker = checkers.get(schema);
  if (!checker) {
    checker = TypeCompiler.Compile(schema);
    checkers.set(schema, checker);
  }
  return checker;
}

function checkerFor(kind: KindName): TypeCheck<TSchema> {
  return compiled(Kinds[kind].schema as TSchema);
}

/**
 * Checks any value against a TypeBox schema (for data that is not a velero.io object, e.g. the item-operation
 * files of a backup) and returns it typed; `what` names the data in the error ("BackupOperation list").
 */
export function parseWith<T extends TSchema>(schema: T, what: string, value: unknown): Static<T> {
  const problems = collectProblems(compiled(schema), value);
  const [first] = problems;
  if (first) throw new ValidationError(what, undefined, first.field, first.problem, problems);
  return value as Static<T>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeName(value: Record<string, unknown>): string | undefined {
  const meta = value.metadata;
  if (!isRecord(meta)) return undefined;
  const name = typeof meta.name === 'string' && meta.name ? meta.name : undefined;
  const generateName = typeof meta.generateName === 'string' && meta.generateName ? `${meta.generateName}*` : undefined;
  const shown = name ?? generateName;
  if (!shown) return undefined;
  return typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/${shown}` : shown;
}

/**
 * Checks `value` against kind K and returns it typed. A missing apiVersion/kind is filled in (lists and some
 * stored files omit them); a present but different one is an error. Throws ValidationError.
 */
export function parse<K extends KindName>(kind: K, value: unknown): ObjectOf<K> {
  const def = Kinds[kind];
  if (!isRecord(value)) {
    throw new ValidationError(kind, undefined, '', `expected an object, got ${typeName(value)}`);
  }
  const objectName = describeName(value);
  if (value.apiVersion !== undefined && value.apiVersion !== def.apiVersion) {
    throw new ValidationError(kind, objectName, 'apiVersion', `expected "${def.apiVersion}", got ${shown(value.apiVersion)}`);
  }
  if (value.kind !== undefined && value.kind !== kind) {
    throw new ValidationError(kind, objectName, 'kind', `expected "${kind}", got ${shown(value.kind)}`);
  }
  let candidate: Record<string, unknown> = value;
  if (value.apiVersion === undefined || value.kind === undefined) {
    candidate = { ...candidate, apiVersion: def.apiVersion, kind };
  }
  // Go always writes `spec`, but an object created by hand may lack it; that is fine when no spec field is required.
  const specRequired = (def.spec as SchemaNode).required;
  if (candidate.spec === undefined && !(Array.isArray(specRequired) && specRequired.length > 0)) {
    candidate = { ...candidate, spec: {} };
  }
  candidate = pruneNulls(def.schema as TSchema, candidate) as Record<string, unknown>;
  const problems = problemsIn(kind, candidate);
  const [first] = problems;
  if (first) throw new ValidationError(kind, objectName, first.field, first.problem, problems);
  return candidate as ObjectOf<K>;
}

/**
 * Drops `null` from optional fields that are not nullable, as the API server does before validating ("null values
 * for fields that are not nullable are pruned"), so a hand-written or Go-written `post: null` reads like an absent
 * field. Copies only the objects it changes.
 */
export function pruneNulls(schema: TSchema, value: unknown): unknown {
  const node = schema as SchemaNode;
  if (value === null || typeof value !== 'object') return value;
  switch (node[Kind]) {
    case 'Union': {
      const nonNull = (node.anyOf as SchemaNode[]).filter((m) => m[Kind] !== 'Null');
      return nonNull.length === 1 && nonNull[0] ? pruneNulls(nonNull[0], value) : value;
    }
    case 'Array': {
      if (!Array.isArray(value)) return value;
      const items = node.items as TSchema;
      let changed = false;
      const out = value.map((item: unknown) => {
        const pruned = pruneNulls(items, item);
        if (pruned !== item) changed = true;
        return pruned;
      });
      return changed ? out : value;
    }
    case 'Object': {
      if (Array.isArray(value)) return value;
      const props = (node.properties ?? {}) as Record<string, SchemaNode>;
      const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
      let out: Record<string, unknown> | undefined;
      for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
        const propSchema = props[key];
        if (!propSchema) continue;
        if (child === null && !required.has(key) && !acceptsNull(propSchema)) {
          out ??= { ...(value as Record<string, unknown>) };
          delete out[key];
          continue;
        }
        const pruned = pruneNulls(propSchema, child);
        if (pruned !== child) {
          out ??= { ...(value as Record<string, unknown>) };
          out[key] = pruned;
        }
      }
      return out ?? value;
    }
    default:
      return value;
  }
}

function acceptsNull(schema: SchemaNode): boolean {
  if (schema[Kind] === 'Null' || schema[Kind] === 'Unknown' || schema[Kind] === 'Any') return true;
  return schema[Kind] === 'Union' && (schema.anyOf as SchemaNode[]).some((m) => m[Kind] === 'Null');
}

/** True when `value` is a valid object of kind K (apiVersion and kind must be present). */
export function isValid<K extends KindName>(kind: K, value: unknown): value is ObjectOf<K> {
  return checkerFor(kind).Check(value);
}

/** Every problem in `value` as an object of kind K; empty when it is valid. */
export function problemsIn(kind: KindName, value: unknown): FieldProblem[] {
  return collectProblems(checkerFor(kind), value);
}

function collectProblems(checker: TypeCheck<TSchema>, value: unknown): FieldProblem[] {
  if (checker.Check(value)) return [];
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const error of expandNullable(checker.Errors(value))) {
    const field = fieldPath(error.path);
    // A union reports once per failing member and a bad parent hides its children: keep the first per field.
    if (seen.has(field)) continue;
    seen.add(field);
    problems.push({ field, problem: describeError(error) });
  }
  return problems;
}

/**
 * A `T | null` field holding a bad non-null value fails as a whole union; report what is wrong inside T instead
 * (`spec.labelSelector.matchLabels.app: expected string` rather than `spec.labelSelector: expected object or null`).
 */
function* expandNullable(errors: Iterable<ValueError>): Generator<ValueError> {
  for (const error of errors) {
    const schema = error.schema as SchemaNode;
    if (error.type === ValueErrorType.Union && error.value !== null && schema[Kind] === 'Union') {
      const members = schema.anyOf as SchemaNode[];
      const nonNull = members.map((m, i) => ({ m, i })).filter(({ m }) => m[Kind] !== 'Null');
      const only = nonNull.length === 1 ? nonNull[0] : undefined;
      const inner = only ? error.errors[only.i] : undefined;
      if (only && only.m[Kind] !== 'Literal' && inner) {
        const nested = [...expandNullable(inner)];
        if (nested.length > 0) {
          yield* nested;
          continue;
        }
      }
    }
    yield error;
  }
}

/** "/spec/hooks/resources/0/name" → "spec.hooks.resources[0].name". */
export function fieldPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

type SchemaNode = TSchema & Record<string, unknown>;

function describeError(error: ValueError): string {
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'is required';
  if (error.type === ValueErrorType.ArrayMinItems) {
    return `expected at least ${String((error.schema as SchemaNode).minItems)} item(s)`;
  }
  const schema = error.schema as SchemaNode;
  // Quote a string only where the field itself is a constrained string (an enum, a duration, a timestamp): a string
  // found where something else was expected could be anything, a credential included, so only its type is shown.
  const got = typeof error.value === 'string' && !expectsString(schema) ? 'string' : shown(error.value);
  return `${expectation(schema)}, got ${got}`;
}

function expectsString(schema: SchemaNode): boolean {
  switch (schema[Kind]) {
    case 'String':
      return true;
    case 'Literal':
      return typeof schema.const === 'string';
    case 'Union':
      return (schema.anyOf as SchemaNode[]).some(expectsString);
    default:
      return false;
  }
}

/** What a schema node wants, in words a user understands. */
function expectation(schema: SchemaNode): string {
  switch (schema[Kind]) {
    case 'Union': {
      const members = schema.anyOf as SchemaNode[];
      const nonNull = members.filter((m) => m[Kind] !== 'Null');
      const orNull = nonNull.length < members.length ? ' or null' : '';
      if (nonNull.every((m) => m[Kind] === 'Literal')) {
        return `expected one of ${nonNull.map((m) => JSON.stringify(m.const)).join(', ')}${orNull}`;
      }
      return nonNull.map((m) => expectation(m)).join(' or ') + orNull;
    }
    case 'Literal':
      return `expected ${JSON.stringify(schema.const)}`;
    case 'String':
      switch (schema.format) {
        case Formats.GoDuration:
          return 'expected duration string like "720h0m0s"';
        case Formats.DateTime:
          return 'expected RFC 3339 timestamp like "2025-01-02T15:04:05Z"';
        case Formats.Byte:
          return 'expected base64-encoded data';
        default:
          return 'expected string';
      }
    case 'Integer':
      return 'expected integer';
    case 'Number':
      return 'expected number';
    case 'Boolean':
      return 'expected boolean (true or false)';
    case 'Array':
      return 'expected list';
    case 'Object':
    case 'Record':
      return 'expected object';
    case 'Null':
      return 'expected null';
    default:
      return 'unexpected value';
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value;
}

/** A short rendering of a bad value for a message: strings quoted and cut, other values by type. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeName(value);
}

// One named parser per kind, for readers who prefer `parseBackup(x)` to `parse('Backup', x)`.
export const parseBackup = (value: unknown) => parse('Backup', value);
export const parseRestore = (value: unknown) => parse('Restore', value);
export const parseSchedule = (value: unknown) => parse('Schedule', value);
export const parseBackupStorageLocation = (value: unknown) => parse('BackupStorageLocation', value);
export const parseVolumeSnapshotLocation = (value: unknown) => parse('VolumeSnapshotLocation', value);
export const parsePodVolumeBackup = (value: unknown) => parse('PodVolumeBackup', value);
export const parsePodVolumeRestore = (value: unknown) => parse('PodVolumeRestore', value);
export const parseBackupRepository = (value: unknown) => parse('BackupRepository', value);
export const parseDeleteBackupRequest = (value: unknown) => parse('DeleteBackupRequest', value);
export const parseDownloadRequest = (value: unknown) => parse('DownloadRequest', value);
export const parseServerStatusRequest = (value: unknown) => parse('ServerStatusRequest', value);
export const parseDataUpload = (value: unknown) => parse('DataUpload', value);
export const parseDataDownload = (value: unknown) => parse('DataDownload', value);
