import { describe, expect, it } from 'vitest';
// The generated serializer is what client-node's typed APIs run every request body through.
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { allCrds, crdAsClientModel, crdFor } from '../../../src/api/index.js';

const wire = (model: unknown) => JSON.parse(JSON.stringify(ObjectSerializer.serialize(model, 'V1CustomResourceDefinition', ''))) as unknown;

describe('CRDs sent through @kubernetes/client-node', () => {
  it('lose enums and x-kubernetes markers when sent as plain objects (why crdAsClientModel exists)', () => {
    type Schema = { properties: Record<string, Schema>; enum?: unknown; 'x-kubernetes-map-type'?: unknown };
    const sent = wire(crdFor('Backup')) as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
    const root = sent.spec.versions[0]?.schema.openAPIV3Schema;
    expect(root?.properties.status?.properties.phase).toEqual({ type: 'string', description: expect.any(String) });
    expect(root?.properties.spec?.properties.labelSelector?.['x-kubernetes-map-type']).toBeUndefined();
  });

  it.each(allCrds().map((c) => [c.metadata.name, c] as const))('%s arrives exactly as generated', (_name, crd) => {
    expect(wire(crdAsClientModel(crd))).toEqual(JSON.parse(JSON.stringify(crd)));
  });
});
