import { describe, expect, it } from 'vitest';
import {
  buildPv,
  defaultStorageClass,
  nodeRoot,
  provisionTarget,
  pvNameFor,
  pvPath,
} from '../../../tools/local-cluster/provisioner/pv-spec.js';

const pvc = {
  metadata: { name: 'data', namespace: 'app', uid: 'abc-123', annotations: { 'volume.kubernetes.io/selected-node': 'local-node-2' } },
  spec: { storageClassName: 'local-path', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  status: { phase: 'Pending' },
};

describe('local-path provisioner rules', () => {
  it('declares the default class', () => {
    expect(defaultStorageClass()).toMatchObject({
      metadata: { name: 'local-path', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'cairn.local/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
      allowVolumeExpansion: true,
    });
  });

  it('puts data at <node-root>/pv/<pv-name>, the node root coming from the Node annotation or the run dir', () => {
    expect(pvNameFor(pvc)).toBe('pvc-abc-123');
    expect(nodeRoot({ runDir: '/r', nodeName: 'local-node-2' })).toBe('/r/nodes/local-node-2');
    expect(nodeRoot({ runDir: '/r', nodeName: 'n', rootAnnotation: '/elsewhere/n' })).toBe('/elsewhere/n');
    expect(pvPath('/r/nodes/local-node-2', 'pvc-abc-123')).toBe('/r/nodes/local-node-2/pv/pvc-abc-123');
  });

  it('builds a local PV pinned to the selected node and pre-bound to the claim', () => {
    const pv = buildPv({ pvc, storageClass: defaultStorageClass(), nodeName: 'local-node-2', path: '/r/nodes/local-node-2/pv/pvc-abc-123' });
    expect(pv).toMatchObject({
      metadata: { name: 'pvc-abc-123', annotations: { 'pv.kubernetes.io/provisioned-by': 'cairn.local/local-path' } },
      spec: {
        capacity: { storage: '1Gi' },
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'local-path',
        volumeMode: 'Filesystem',
        claimRef: { namespace: 'app', name: 'data', uid: 'abc-123' },
        local: { path: '/r/nodes/local-node-2/pv/pvc-abc-123' },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['local-node-2'] }] }] } },
      },
    });
  });

  it('provisions only pending claims of its classes once a node is selected', () => {
    const sc = defaultStorageClass();
    expect(provisionTarget({ pvc, storageClass: sc, fallbackNode: 'x' })).toBe('local-node-2');
    expect(provisionTarget({ pvc: { ...pvc, metadata: { ...pvc.metadata, annotations: {} } }, storageClass: sc, fallbackNode: 'x' })).toBeUndefined();
    expect(provisionTarget({ pvc: { ...pvc, metadata: { ...pvc.metadata, annotations: {} } }, storageClass: { ...sc, volumeBindingMode: 'Immediate' }, fallbackNode: 'local-node-1' })).toBe('local-node-1');
    expect(provisionTarget({ pvc: { ...pvc, spec: { ...pvc.spec, volumeName: 'pv1' } }, storageClass: sc, fallbackNode: undefined })).toBeUndefined();
    expect(provisionTarget({ pvc, storageClass: { ...sc, provisioner: 'other' }, fallbackNode: undefined })).toBeUndefined();
  });
});
