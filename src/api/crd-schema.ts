/**
 * TypeBox → Kubernetes structural openAPIV3Schema. The API server only accepts structural schemas: every node has
 * a `type` (or `x-kubernetes-preserve-unknown-fields`), no `$ref`, and `anyOf`/`oneOf` may not declare types. So:
 * a union of string literals becomes `enum`, `T | null` becomes T with `nullable: true`, a Record becomes
 * `additionalProperties`, Unknown becomes a preserve-unknown node, and any other union is a programming error.
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { Formats } from './schema.js';

/** apiextensions.k8s.io/v1 JSONSchemaProps, the subset cairn emits. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  enum?: (string | number | boolean)[];
  nullable?: boolean;
  default?: unknown;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-int-or-string'?: boolean;
}

/** Formats the API server knows; internal ones (go-duration) are checked by cairn only, as Velero's CRDs have none. */
const KUBERNETES_FORMATS = new Set<string>([Formats.DateTime, Formats.Byte, 'int32', 'int64', 'float', 'double']);
const COPIED_KEYWORDS = ['description', 'default', 'minItems', 'maxItems', 'minLength', 'maxLength', 'minimum', 'maximum', 'pattern'] as const;

type Node = TSchema & Record<string, unknown>;

/** Converts one TypeBox schema; `path` only serves error messages. */
export function toStructuralSchema(schema: TSchema, path = '$'): JSONSchemaProps {
  const node = schema as Node;
  const out = convertShape(node, path);
  for (const key of COPIED_KEYWORDS) {
    if (node[key] !== undefined) (out as Record<string, unknown>)[key] = node[key];
  }
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-')) (out as Record<string, unknown>)[key] = value;
  }
  if (typeof node.format === 'string' && KUBERNETES_FORMATS.has(node.format)) out.format = node.format;
  return out;
}

function convertShape(node: Node, path: string): JSONSchemaProps {
  switch (node[Kind]) {
    case 'Object':
      return convertObject(node, path);
    case 'Record':
      return convertRecord(node, path);
    case 'Array':
      return { type: 'array', items: toStructuralSchema(node.items as TSchema, `${path}[]`) };
    case 'String':
      return { type: 'string' };
    case 'Integer':
      return { type: 'integer' };
    case 'Number':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'Literal':
      return convertLiteral(node, path);
    case 'Union':
      return convertUnion(node, path);
    case 'Unknown':
    case 'Any':
      return { 'x-kubernetes-preserve-unknown-fields': true };
    default:
      throw new Error(`${path}: TypeBox kind ${String(node[Kind])} has no structural CRD equivalent`);
  }
}

function convertObject(node: Node, path: string): JSONSchemaProps {
  const props = (node.properties ?? {}) as Record<string, TSchema>;
  const out: JSONSchemaProps = { type: 'object' };
  const names = Object.keys(props).sort();
  if (names.length > 0) {
    out.properties = Object.fromEntries(names.map((n) => [n, toStructuralSchema(props[n] as TSchema, `${path}.${n}`)]));
  }
  const required = Array.isArray(node.required) ? [...(node.required as string[])].sort() : [];
  if (required.length > 0) out.required = required;
  return out;
}

function convertRecord(node: Node, path: string): JSONSchemaProps {
  const patterns = Object.values((node.patternProperties ?? {}) as Record<string, TSchema>);
  const [value] = patterns;
  if (patterns.length !== 1 || value === undefined) throw new Error(`${path}: only Record<string, T> is supported`);
  const valueKind = (value as Node)[Kind];
  if (valueKind === 'Unknown' || valueKind === 'Any') {
    return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }
  return { type: 'object', additionalProperties: toStructuralSchema(value, `${path}.*`) };
}

function convertLiteral(node: Node, path: string): JSONSchemaProps {
  const value = node.const;
  if (typeof value === 'string') return { type: 'string', enum: [value] };
  if (typeof value === 'boolean') return { type: 'boolean', enum: [value] };
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number', enum: [value] };
  throw new Error(`${path}: unsupported literal ${String(value)}`);
}

function convertUnion(node: Node, path: string): JSONSchemaProps {
  const members = node.anyOf as Node[];
  const nonNull = members.filter((m) => m[Kind] !== 'Null');
  const nullable = nonNull.length < members.length;
  let out: JSONSchemaProps;
  if (nonNull.length > 0 && nonNull.every((m) => m[Kind] === 'Literal' && typeof m.const === 'string')) {
    out = { type: 'string', enum: nonNull.map((m) => m.const as string) };
  } else if (nonNull.length === 1 && nonNull[0] !== undefined) {
    out = toStructuralSchema(nonNull[0], path);
  } else {
    throw new Error(`${path}: a union of different types cannot be expressed in a structural CRD schema`);
  }
  if (nullable) out.nullable = true;
  return out;
}
