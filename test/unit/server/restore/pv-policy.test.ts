import { describe, expect, it } from 'vitest';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import { decidePv } from '../../../../src/server/restore/pv-policy.js';
import { parseVolumeInfos, type StoredBackupVolumeInfo } from '../../../../src/api/volume-info.js';

const pv = (reclaim: string): UnstructuredObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-1' },
  spec: { persistentVolumeReclaimPolicy: reclaim },
});
const info = (over: Partial<StoredBackupVolumeInfo>): StoredBackupVolumeInfo[] => [{ pvName: 'pv-1', pvcName: 'data', pvcNamespace: 'app', ...over }];

describe('what happens to a persistent volume', () => {
  it.each([
    { name: 'fs-backup volume', pv: pv('Retain'), infos: info({ backupMethod: 'PodVolumeBackup' }), exists: false, want: 'provision' },
    { name: 'CSI snapshot', pv: pv('Retain'), infos: info({ backupMethod: 'CSISnapshot' }), exists: false, want: 'provision' },
    { name: 'native snapshot (not supported: new volume, with a warning)', pv: pv('Retain'), infos: info({ backupMethod: 'NativeSnapshot' }), exists: false, want: 'provision' },
    { name: 'skipped volume, Delete policy (dynamically provisioned)', pv: pv('Delete'), infos: info({ skipped: true, pvInfo: { reclaimPolicy: 'Delete' } }), exists: false, want: 'provision' },
    { name: 'skipped volume, Retain policy, absent', pv: pv('Retain'), infos: info({ skipped: true, pvInfo: { reclaimPolicy: 'Retain' } }), exists: false, want: 'restore' },
    { name: 'skipped volume, Retain policy, present', pv: pv('Retain'), infos: info({ skipped: true }), exists: true, want: 'skip' },
    { name: 'not in the volume information, Delete policy', pv: pv('Delete'), infos: [], exists: false, want: 'provision' },
    { name: 'not in the volume information, Retain policy', pv: pv('Retain'), infos: [], exists: false, want: 'restore' },
    { name: 'volume info policy wins over the object', pv: pv('Retain'), infos: info({ pvInfo: { reclaimPolicy: 'Delete' } }), exists: false, want: 'provision' },
  ])('$name → $want', ({ pv: p, infos, exists, want }) => {
    expect(decidePv({ pv: p, volumeInfos: infos, exists }).action).toBe(want);
  });

  it('a PV missing from the volume information whose claim was backed up from a pod is provisioned anew (legacy rule)', () => {
    const claimed: UnstructuredObject = { ...pv('Retain'), spec: { persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'app', name: 'data' } } };
    const pvb = (ns: string, claim: string) => ({ metadata: { annotations: { 'velero.io/pvc-name': claim } }, spec: { pod: { namespace: ns } } });
    expect(decidePv({ pv: claimed, volumeInfos: [], exists: false, podVolumeBackups: [pvb('app', 'data')] }).action).toBe('provision');
    expect(decidePv({ pv: claimed, volumeInfos: [], exists: false, podVolumeBackups: [pvb('other', 'data'), pvb('app', 'logs')] }).action).toBe('restore');
  });

  it('warns for native snapshots it cannot restore', () => {
    const d = decidePv({ pv: pv('Retain'), volumeInfos: info({ backupMethod: 'NativeSnapshot' }), exists: false });
    expect(d).toMatchObject({ action: 'provision', warning: expect.stringContaining('native snapshot') });
  });

  it('reads volume information leniently', () => {
    expect(parseVolumeInfos(undefined)).toEqual([]);
    expect(parseVolumeInfos(null)).toEqual([]);
    expect(parseVolumeInfos([{ pvName: 'a' }, 3, null])).toEqual([{ pvName: 'a' }]);
  });
});
