/**
 * @kubernetes/client-node sends built-in objects through its generated models, which name some JSON keys
 * differently (`enum` is `_enum`, `default` is `_default`, `x-kubernetes-map-type` is `x_kubernetes_map_type`)
 * and silently DROP keys they do not know. A plain CRD passed to ApiextensionsV1Api (or KubernetesObjectApi)
 * therefore loses every enum and x-kubernetes-* marker on the way to the server. `crdAsClientModel()` renames
 * those keys so that the model serializes back to exactly the plain CRD.
 *
 * In the models, `items` and `additionalProperties` are untyped (passed through as they are), while
 * `properties`, `patternProperties`, `definitions`, `allOf`/`anyOf`/`oneOf` and `not` hold typed schemas.
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { CustomResourceDefinition } from './crd.js';
import type { JSONSchemaProps } from './crd-schema.js';

const RENAMED: Readonly<Record<string, string>> = { enum: '_enum', default: '_default', $ref: 'ref', $schema: 'schema' };
const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];

function schemaAsModel(schema: JSONSchemaProps | Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    const name = RENAMED[key] ?? (key.startsWith('x-kubernetes-') ? key.replaceAll('-', '_') : key);
    if (SCHEMA_MAPS.includes(key) && value && typeof value === 'object') {
      out[name] = Object.fromEntries(
        Object.entries(value as Record<string, Record<string, unknown>>).map(([k, v]) => [k, schemaAsModel(v)]),
      );
    } else if (SCHEMA_LISTS.includes(key) && Array.isArray(value)) {
      out[name] = value.map((v: Record<string, unknown>) => schemaAsModel(v));
    } else if (key === 'not' && value && typeof value === 'object') {
      out[name] = schemaAsModel(value as Record<string, unknown>);
    } else {
      out[name] = value;
    }
  }
  return out;
}

/** The CRD in the shape @kubernetes/client-node's typed APIs expect, so nothing is dropped when it is sent. */
export function crdAsClientModel(crd: CustomResourceDefinition): V1CustomResourceDefinition {
  return {
    ...crd,
    spec: {
      ...crd.spec,
      versions: crd.spec.versions.map((v) => ({
        ...v,
        schema: { openAPIV3Schema: schemaAsModel(v.schema.openAPIV3Schema) },
      })),
    },
  } as V1CustomResourceDefinition;
}
