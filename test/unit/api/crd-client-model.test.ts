import { describe, expect, it } from 'vitest';
// The generated serializer is what client-node's typed APIs run every request body through.
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { allCrds, crdAsClientModel, crdFor } from '../../../src/api/index.js';

const wire = (model: unknown) => JSON.parse(JSON.stringify(ObjectSerializer.serialize(model, 'V1CustomResourceDefinition', ''))) as unknown;

describe('CRDs sent through @kubernetes/client-node', () => {
  it('lose enums and x-kubernetes markers when sent as plain JSON copies (why crdAsClientModel exists)', () => {
    type Schema = { properties: Record<string, Schema>; enum?: unknown; 'x-kubernetes-map-type'?: unknown };
    const plainCopy = JSON.parse(JSON.stringify(crdFor('Backup'))) as unknown;
    const sent = wire(plainCopy) as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
    const root = sent.spec.versions[0]?.schema.openAPIV3Schema;
    expect(root?.properties.status?.properties.phase).toEqual({ type: 'string', description: expect.any(String) });
    expect(root?.properties.spec?.properties.labelSelector?.['x-kubernetes-map-type']).toBeUndefined();
  });

  it.each(allCrds().map((c) => [c.metadata.name, c] as const))('%s arrives exactly as generated', (_name, crd) => {
    const json = JSON.parse(JSON.stringify(crd)) as unknown;
    // As returned by allCrds() (non-enumerable model aliases on every schema node)...
    expect(wire(crd)).toEqual(json);
    // ...and from any plain copy through crdAsClientModel.
    expect(wire(crdAsClientModel(JSON.parse(JSON.stringify(crd)) as typeof crd))).toEqual(json);
  });

  it('keeps the aliases out of JSON, YAML and spreads of the top level', () => {
    const crd = crdFor('PodVolumeBackup');
    expect(JSON.stringify(crd)).not.toMatch(/_enum|x_kubernetes/);
    expect(wire({ ...crd, metadata: { ...crd.metadata, labels: { component: 'cairn' } } })).toMatchObject({
      metadata: { labels: { component: 'cairn' } },
      spec: { versions: [{ schema: { openAPIV3Schema: { properties: { spec: { properties: { uploaderType: { enum: ['kopia', ''] } } } } } } }] },
    });
  });
});
