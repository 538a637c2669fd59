/**
 * A checker for the rules the API server applies to CRD schemas (apiextensions "structural schema" and the
 * supported-keyword list), so a bad schema fails here instead of at install time.
 */
const ALLOWED_KEYS = new Set([
  'type', 'format', 'description', 'enum', 'nullable', 'default', 'properties', 'required', 'items',
  'additionalProperties', 'minItems', 'maxItems', 'minLength', 'maxLength', 'minimum', 'maximum', 'pattern',
  'minProperties', 'maxProperties', 'uniqueItems', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'title',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-map-type', 'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource',
  'x-kubernetes-validations',
]);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

type Node = Record<string, unknown>;

/** Every rule violation in `schema`, as "path: problem"; empty when the API server would accept it. */
export function structuralProblems(schema: unknown, path = 'openAPIV3Schema'): string[] {
  const problems: string[] = [];
  visit(schema, path, problems, true);
  return problems;
}

function visit(value: unknown, path: string, problems: string[], isRoot = false): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${path}: schema node must be an object`);
    return;
  }
  const node = value as Node;
  for (const key of Object.keys(node)) {
    if (!ALLOWED_KEYS.has(key)) problems.push(`${path}: keyword "${key}" is not allowed in a CRD schema`);
  }
  if (Object.getOwnPropertySymbols(node).length > 0) problems.push(`${path}: carries symbol keys`);
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const type = node.type;
  if (type === undefined) {
    if (!preserve && !intOrString) problems.push(`${path}: no type (and not preserve-unknown-fields)`);
  } else if (typeof type !== 'string' || !TYPES.has(type)) {
    problems.push(`${path}: bad type ${JSON.stringify(type)}`);
  }
  if (isRoot && type !== 'object') problems.push(`${path}: root must be type object`);
  if (node.properties !== undefined && node.additionalProperties !== undefined) {
    problems.push(`${path}: properties and additionalProperties are mutually exclusive`);
  }
  if ((node.properties !== undefined || node.additionalProperties !== undefined) && type !== 'object') {
    problems.push(`${path}: properties on a non-object`);
  }
  if (type === 'array' && node.items === undefined) problems.push(`${path}: array without items`);
  if (node.items !== undefined && type !== 'array') problems.push(`${path}: items on a non-array`);
  if (node.nullable !== undefined && typeof node.nullable !== 'boolean') problems.push(`${path}: nullable not boolean`);
  if (node.enum !== undefined) {
    if (!Array.isArray(node.enum) || node.enum.length === 0) problems.push(`${path}: enum must be a non-empty list`);
    else {
      for (const v of node.enum) {
        const ok =
          (type === 'string' && typeof v === 'string') ||
          (type === 'boolean' && typeof v === 'boolean') ||
          ((type === 'integer' || type === 'number') && typeof v === 'number');
        if (!ok) problems.push(`${path}: enum value ${JSON.stringify(v)} does not match type ${String(type)}`);
      }
    }
  }
  if (node.required !== undefined) {
    const props = (node.properties ?? {}) as Node;
    if (!Array.isArray(node.required)) problems.push(`${path}: required must be a list`);
    else for (const r of node.required) if (!(String(r) in props)) problems.push(`${path}: required "${String(r)}" is not a property`);
  }
  if (node.properties !== undefined) {
    for (const [name, child] of Object.entries(node.properties as Node)) {
      if (isRoot && name === 'metadata') {
        const meta = child as Node;
        const extra = Object.keys(meta).filter((k) => k !== 'type' && k !== 'description');
        if (meta.type !== 'object' || extra.length > 0) problems.push(`${path}.metadata: may only be {type: object}`);
        continue;
      }
      visit(child, `${path}.properties.${name}`, problems);
    }
  }
  if (typeof node.additionalProperties === 'object') visit(node.additionalProperties, `${path}.additionalProperties`, problems);
  if (typeof node.additionalProperties === 'boolean' && node.additionalProperties === false) {
    problems.push(`${path}: additionalProperties: false is not allowed`);
  }
  if (node.items !== undefined) visit(node.items, `${path}.items`, problems);
}
