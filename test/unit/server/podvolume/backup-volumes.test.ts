import { describe, expect, it } from 'vitest';
import {
  annotationList,
  podNotRunningReason,
  selectPodVolumes,
  wantedVolumes,
  type ClaimInfo,
  type PodLike,
} from '../../../../src/server/podvolume/backup-volumes.js';

const pod = (annotations: Record<string, string>, volumes: PodLike['spec'] extends infer S ? (S extends { volumes?: infer V } ? V : never) : never, mounts: string[], devices: string[] = []): PodLike => ({
  metadata: { name: 'p', namespace: 'app', uid: 'pod-uid', annotations },
  spec: { nodeName: 'n1', volumes, containers: [{ volumeMounts: mounts.map((name) => ({ name })), volumeDevices: devices.map((name) => ({ name })) }] },
  status: { phase: 'Running' },
});

const ALL_KINDS = [
  { name: 'data', persistentVolumeClaim: { claimName: 'data-pvc' } },
  { name: 'cache', emptyDir: {} },
  { name: 'host', hostPath: { path: '/x' } },
  { name: 'sec', secret: { secretName: 's' } },
  { name: 'cm', configMap: { name: 'c' } },
  { name: 'proj', projected: {} },
  { name: 'down', downwardAPI: {} },
  { name: 'default-token-abc', emptyDir: {} },
];
const mountedAll = ALL_KINDS.map((v) => v.name);
const claim: ClaimInfo = {
  pvc: { metadata: { name: 'data-pvc', namespace: 'app', uid: 'pvc-uid' }, spec: { volumeName: 'pv-1' } },
  pv: { metadata: { name: 'pv-1' }, spec: { persistentVolumeReclaimPolicy: 'Delete' } },
};
const claims = new Map([['data', claim]]);
const chosenNames = (s: ReturnType<typeof selectPodVolumes>) => s.chosen.map((c) => c.volume);

describe('fs-backup volume selection', () => {
  it('reads comma lists with spaces and empties', () => {
    expect(annotationList(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(annotationList(undefined)).toEqual([]);
  });

  it('opt-in: only the annotated volumes', () => {
    const p = pod({ 'backup.velero.io/backup-volumes': 'data,cache' }, ALL_KINDS, mountedAll);
    expect(wantedVolumes(p, false)).toEqual(['data', 'cache']);
    const s = selectPodVolumes({ pod: p, defaultVolumesToFsBackup: false, pvcsIncluded: true, claims });
    expect(chosenNames(s)).toEqual(['data', 'cache']);
    expect(s.chosen[0]?.claim).toBe(claim);
    expect(s.skipped).toEqual([]);
  });

  it('opt-in without the annotation takes nothing', () => {
    expect(selectPodVolumes({ pod: pod({}, ALL_KINDS, mountedAll), defaultVolumesToFsBackup: false, pvcsIncluded: true, claims })).toEqual({ chosen: [], skipped: [] });
  });

  it('opt-out: every volume minus excludes and the kinds never backed up', () => {
    const p = pod({ 'backup.velero.io/backup-volumes-excludes': 'cache' }, ALL_KINDS, mountedAll);
    const s = selectPodVolumes({ pod: p, defaultVolumesToFsBackup: true, pvcsIncluded: true, claims });
    expect(chosenNames(s)).toEqual(['data']);
    expect(s.skipped.map((x) => [x.volume, x.quiet])).toEqual([
      ['host', true],
      ['sec', true],
      ['cm', true],
      ['proj', true],
      ['down', true],
      ['default-token-abc', true],
    ]);
  });

  it('the opt-in annotation cannot force secret/configMap/hostPath volumes', () => {
    const p = pod({ 'backup.velero.io/backup-volumes': 'sec,cm,host' }, ALL_KINDS, mountedAll);
    const s = selectPodVolumes({ pod: p, defaultVolumesToFsBackup: false, pvcsIncluded: true, claims });
    expect(s.chosen).toEqual([]);
    expect(s.skipped.map((x) => x.volume)).toEqual(['sec', 'cm', 'host']);
  });

  it('PVC volumes are skipped when persistentvolumeclaims are excluded from the backup', () => {
    const p = pod({ 'backup.velero.io/backup-volumes': 'data,cache' }, ALL_KINDS, mountedAll);
    const s = selectPodVolumes({ pod: p, defaultVolumesToFsBackup: false, pvcsIncluded: false, claims });
    expect(chosenNames(s)).toEqual(['cache']);
    expect(s.skipped[0]?.reason).toContain('persistentvolumeclaims are excluded');
  });

  it("Velero's messages for unknown, block, unmounted and hostPath-PV volumes", () => {
    const hostPv: ClaimInfo = { pvc: claim.pvc!, pv: { metadata: { name: 'pv-h' }, spec: { hostPath: { path: '/h' } } } };
    const vols = [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-pvc' } },
      { name: 'blk', persistentVolumeClaim: { claimName: 'blk-pvc' } },
      { name: 'loose', emptyDir: {} },
    ];
    const p = pod({ 'backup.velero.io/backup-volumes': 'data,blk,loose,ghost' }, vols, ['data'], ['blk']);
    const s = selectPodVolumes({ pod: p, defaultVolumesToFsBackup: false, pvcsIncluded: true, claims: new Map([['data', hostPv], ['blk', claim]]) });
    expect(s.chosen).toEqual([]);
    expect(s.skipped.map((x) => x.reason)).toEqual([
      'Volume data in pod app/p is a hostPath volume which is not supported for pod volume backup, skipping',
      'volume blk declared in pod app/p is a block volume. Block volumes are not supported for fs backup, skipping',
      'volume loose is declared in pod app/p but not mounted by any container, skipping',
      'No volume named ghost found in pod app/p, skipping',
    ]);
    // The block PVC keeps its claim so its volume info entry can say why.
    expect(s.skipped[1]?.claim).toBe(claim);
  });

  it('a claim that could not be read is skipped with the reason', () => {
    const p = pod({ 'backup.velero.io/backup-volumes': 'data' }, ALL_KINDS, mountedAll);
    const s = selectPodVolumes({ pod: p, defaultVolumesToFsBackup: false, pvcsIncluded: true, claims: new Map([['data', {}]]) });
    expect(s.chosen).toEqual([]);
    expect(s.skipped[0]?.reason).toContain('error getting persistent volume claim data-pvc');
  });

  it('pods that are not running (or not scheduled, or terminating) have no volumes to back up', () => {
    const running = pod({}, [], []);
    expect(podNotRunningReason(running)).toBeUndefined();
    expect(podNotRunningReason({ ...running, status: { phase: 'Pending' } })).toContain('pod is not running');
    expect(podNotRunningReason({ ...running, spec: {} })).toContain('not scheduled');
    expect(podNotRunningReason({ ...running, metadata: { ...running.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } })).toContain('terminated');
  });
});
