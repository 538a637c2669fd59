import { describe, expect, it } from 'vitest';
import { newPodVolumeBackup } from '../../../../src/api/index.js';
import { SharedClaimTracker } from '../../../../src/server/podvolume/backup-shared-claims.js';

const pvb = (pod: string, volume: string, claim?: string) =>
  newPodVolumeBackup({
    namespace: 'velero',
    name: `b-${pod}-${volume}`,
    ...(claim ? { annotations: { 'velero.io/pvc-name': claim } } : {}),
    spec: { node: 'n1', pod: { kind: 'Pod', namespace: 'app', name: pod, uid: `${pod}-uid` }, volume, backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia', tags: {} },
  });

describe('SharedClaimTracker: a claim mounted by several pods is backed up once per backup', () => {
  it('the first pod volume to take a claim keeps it; another pod with the same claim is told who took it', () => {
    const t = new SharedClaimTracker();
    expect(t.takenByAnother('app', 'shared', 'a-uid', 'data')).toBeUndefined();
    t.take('app', 'shared', { podUid: 'a-uid', podName: 'a', volume: 'data' });
    expect(t.takenByAnother('app', 'shared', 'a-uid', 'data')).toBeUndefined();
    expect(t.takenByAnother('app', 'shared', 'b-uid', 'shared')).toEqual({ podUid: 'a-uid', podName: 'a', volume: 'data' });
    t.take('app', 'shared', { podUid: 'b-uid', podName: 'b', volume: 'shared' });
    expect(t.takenByAnother('app', 'shared', 'a-uid', 'data')).toBeUndefined();
  });

  it('claims of the same name in other namespaces are different claims', () => {
    const t = new SharedClaimTracker();
    t.take('app', 'shared', { podUid: 'a-uid', podName: 'a', volume: 'data' });
    expect(t.takenByAnother('other', 'shared', 'b-uid', 'data')).toBeUndefined();
  });

  it('a backup run again after a restart skips the volumes the earlier run skipped', () => {
    const t = new SharedClaimTracker();
    t.seed([pvb('a', 'data', 'shared'), pvb('a', 'scratch')]);
    expect(t.takenByAnother('app', 'shared', 'b-uid', 'data')?.podName).toBe('a');
    expect(t.takenByAnother('app', 'shared', 'a-uid', 'data')).toBeUndefined();
  });
});
