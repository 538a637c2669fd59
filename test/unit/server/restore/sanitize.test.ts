import { describe, expect, it } from 'vitest';
import { newRestore } from '../../../../src/api/index.js';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { resetMetadataAndStatus, shouldRestoreStatus, withRestoreLabels } from '../../../../src/server/restore/sanitize.js';

const live: UnstructuredObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'app',
    uid: 'u-1',
    resourceVersion: '42',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    selfLink: '/apis/apps/v1/namespaces/app/deployments/web',
    managedFields: [{ manager: 'kubectl' }],
    ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u-0' }],
    generateName: 'web-',
    labels: { app: 'web' },
    annotations: { note: 'kept' },
    finalizers: ['example.com/keep'],
  },
  spec: { replicas: 2 },
  status: { readyReplicas: 2 },
};

describe('sanitising restored objects', () => {
  it('drops what the API server sets and keeps what the user wrote', () => {
    expect(resetMetadataAndStatus(live)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'app', labels: { app: 'web' }, annotations: { note: 'kept' }, finalizers: ['example.com/keep'] },
      spec: { replicas: 2 },
    });
    expect(live.metadata.uid).toBe('u-1');
  });

  it('keeps status only when asked', () => {
    expect(resetMetadataAndStatus(live, { keepStatus: true }).status).toEqual({ readyReplicas: 2 });
  });

  it('restores status for resources in spec.restoreStatus, overridden per object by the annotation', () => {
    const r = newRestore({ name: 'r', spec: { backupName: 'b', restoreStatus: { includedResources: ['deployments'] } } });
    expect(shouldRestoreStatus(r, 'deployments.apps', live)).toBe(true);
    expect(shouldRestoreStatus(r, 'configmaps', { ...live, kind: 'ConfigMap' })).toBe(false);
    const optedOut = { ...live, metadata: { ...live.metadata, annotations: { 'velero.io/restore-status': 'false' } } };
    expect(shouldRestoreStatus(r, 'deployments.apps', optedOut)).toBe(false);
    const none = newRestore({ name: 'r', spec: { backupName: 'b' } });
    expect(shouldRestoreStatus(none, 'deployments.apps', live)).toBe(false);
    const optedIn = { ...live, metadata: { ...live.metadata, annotations: { 'velero.io/restore-status': 'true' } } };
    expect(shouldRestoreStatus(none, 'deployments.apps', optedIn)).toBe(true);
  });

  it('labels restored objects with the backup and restore names (63-character label values)', () => {
    const long = 'r'.repeat(70);
    const o = withRestoreLabels(resetMetadataAndStatus(live), 'nightly', long);
    expect(o.metadata.labels?.['velero.io/backup-name']).toBe('nightly');
    expect(o.metadata.labels?.['velero.io/restore-name']).toHaveLength(63);
    expect(o.metadata.labels?.app).toBe('web');
  });
});
