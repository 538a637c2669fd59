import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ORIGINAL_RECLAIM_POLICY_ANNOTATION, handedOverPv, nextRebindStep, originalPolicyPv, type RebindState } from '../../../src/agent/exposer/rebind.js';

const target: V1PersistentVolumeClaim = {
  metadata: { name: 'data', namespace: 'restored', uid: 'target-uid' },
  spec: { selector: { matchLabels: { 'velero.io/dynamic-pv-restore': 'restored.data.abcde' } } },
};
const restorePvc: V1PersistentVolumeClaim = { metadata: { name: 'r1-abcde', namespace: 'velero' }, spec: { volumeName: 'pv-1' } };

function pv(opts: { policy?: string; original?: string; phase?: string; claimUid?: string } = {}): V1PersistentVolume {
  return {
    metadata: {
      name: 'pv-1',
      annotations: { 'pv.kubernetes.io/provisioned-by': 'hostpath.csi.k8s.io', 'pv.kubernetes.io/bound-by-controller': 'yes', ...(opts.original ? { [ORIGINAL_RECLAIM_POLICY_ANNOTATION]: opts.original } : {}) },
    },
    spec: { persistentVolumeReclaimPolicy: opts.policy ?? 'Delete', claimRef: { namespace: 'velero', name: 'r1-abcde', uid: opts.claimUid ?? 'restore-uid', resourceVersion: '42' } },
    status: { phase: opts.phase ?? 'Bound' },
  };
}

const state = (s: Partial<RebindState>): RebindState => ({ restorePodExists: false, targetPvc: target, targetRef: 'restored/data', cancel: false, ...s });

describe('PV re-bind of a DataDownload, step by step from what is observed', () => {
  it('records the restored PV first (the restore PVC names it)', () => {
    expect(nextRebindStep(state({ restorePvc, restorePodExists: true }))).toEqual({ step: 'record', pvName: 'pv-1' });
    // The data mover's success was recorded before the restore PVC was seen bound.
    expect(nextRebindStep(state({ recordedPv: '', restorePvc }))).toEqual({ step: 'record', pvName: 'pv-1' });
    expect(nextRebindStep(state({ restorePvc: { metadata: {}, spec: {} } }))).toEqual({ step: 'failed', message: 'restore PVC of restored/data is not bound: no restored volume to bind' });
    expect(nextRebindStep(state({}))).toMatchObject({ step: 'failed', message: expect.stringContaining('is gone') });
  });

  it('holds the PV with Retain, remembering the policy, before the restore PVC goes', () => {
    expect(nextRebindStep(state({ recordedPv: 'pv-1', restorePvc, restorePodExists: true, pv: pv() }))).toEqual({ step: 'retain', pvName: 'pv-1', originalPolicy: 'Delete' });
    expect(nextRebindStep(state({ recordedPv: 'pv-1', restorePvc, pv: pv({ policy: 'Delete', original: 'Delete' }) }))).toEqual({ step: 'retain', pvName: 'pv-1', originalPolicy: 'Delete' });
  });

  it('then deletes the restore pod and PVC and waits for the PV to be Released', () => {
    const held = pv({ policy: 'Retain', original: 'Delete' });
    expect(nextRebindStep(state({ recordedPv: 'pv-1', restorePvc, restorePodExists: true, pv: held }))).toEqual({ step: 'release', deletePod: true, deletePvc: true });
    expect(nextRebindStep(state({ recordedPv: 'pv-1', restorePvc: { ...restorePvc, metadata: { ...restorePvc.metadata, deletionTimestamp: new Date() } }, pv: held }))).toEqual({ step: 'wait', why: 'PV pv-1 is Bound, not Released yet' });
  });

  it('hands a Released PV over to the target PVC: claimRef with its UID, the selector label; still Retain', () => {
    const released = pv({ policy: 'Retain', original: 'Delete', phase: 'Released' });
    const step = nextRebindStep(state({ recordedPv: 'pv-1', pv: released }));
    expect(step.step).toBe('hand-over');
    const out = (step as { pv: V1PersistentVolume }).pv;
    expect(out.spec?.claimRef).toEqual({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'restored', name: 'data', uid: 'target-uid' });
    expect(out.metadata?.labels).toEqual({ 'velero.io/dynamic-pv-restore': 'restored.data.abcde' });
    expect(out.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(out.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    expect(released.spec?.claimRef?.name).toBe('r1-abcde');
    expect(handedOverPv(released, { metadata: { name: 'x', namespace: 'y', uid: 'u' }, spec: {} }).metadata?.labels).toEqual({});
  });

  it('puts the original policy back only once the target is bound (a Released PV with Delete would be deleted), then is done', () => {
    const handed = pv({ policy: 'Retain', original: 'Delete', phase: 'Released', claimUid: 'target-uid' });
    expect(nextRebindStep(state({ recordedPv: 'pv-1', pv: handed }))).toEqual({ step: 'wait', why: 'target PVC restored/data is not bound to PV pv-1 yet' });
    const boundTarget = { ...target, spec: { ...target.spec, volumeName: 'pv-1' } };
    const bound = pv({ policy: 'Retain', original: 'Delete', phase: 'Bound', claimUid: 'target-uid' });
    const step = nextRebindStep(state({ recordedPv: 'pv-1', pv: bound, targetPvc: boundTarget }));
    expect(step.step).toBe('restore-policy');
    const restored = (step as { pv: V1PersistentVolume }).pv;
    expect(restored.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(restored.metadata?.annotations?.[ORIGINAL_RECLAIM_POLICY_ANNOTATION]).toBeUndefined();
    expect(nextRebindStep(state({ recordedPv: 'pv-1', pv: originalPolicyPv(bound), targetPvc: boundTarget }))).toEqual({ step: 'done' });
  });

  it('fails when the target PVC or the PV is gone or the target is bound elsewhere', () => {
    expect(nextRebindStep(state({ recordedPv: 'pv-1', pv: pv(), targetPvc: undefined }))).toEqual({ step: 'failed', message: 'target PVC restored/data is gone' });
    expect(nextRebindStep(state({ recordedPv: 'pv-1' }))).toEqual({ step: 'failed', message: 'restored PV pv-1 is gone' });
    expect(nextRebindStep(state({ recordedPv: 'pv-1', pv: pv(), targetPvc: { ...target, spec: { volumeName: 'pv-other' } } }))).toEqual({ step: 'failed', message: 'target PVC restored/data is already bound to PV pv-other' });
  });

  it('honours a cancel until the PV is handed over, not after', () => {
    expect(nextRebindStep(state({ recordedPv: 'pv-1', pv: pv({ policy: 'Retain', original: 'Delete', phase: 'Released' }), cancel: true }))).toMatchObject({ step: 'canceled' });
    expect(nextRebindStep(state({ restorePvc, cancel: true }))).toMatchObject({ step: 'canceled' });
    expect(nextRebindStep(state({ recordedPv: 'pv-1', pv: pv({ policy: 'Retain', original: 'Delete', phase: 'Released', claimUid: 'target-uid' }), cancel: true }))).toMatchObject({ step: 'wait' });
  });
});
