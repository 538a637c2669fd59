/** The node-agent state machine's decisions (data-path-decisions.ts), table by table. */
import { describe, expect, it } from 'vitest';
import {
  CANCEL_DELAY_IN_PROGRESS_MS,
  CANCEL_DELAY_OTHERS_MS,
  REQUEUE_BUSY_MS,
  dataPathStep,
  newStep,
  loadAffinityDecision,
  AFFINITY_WAIT_RETRY_MS,
  prepareStep,
  runStep,
  watchEndStep,
  type DataPathObject,
  type DataPathObservation,
} from '../../../src/agent/controllers/data-path-decisions.js';
import { dataPath, pod } from '../../support/builders.js';

const FINALIZER = 'velero.io/data-upload-download-finalizer';
const NOW = Date.parse('2026-01-01T12:00:00Z');

function observe(obj: (DataPathObject & { status?: { node?: string } }) | undefined, more: Partial<DataPathObservation<DataPathObject>> = {}): DataPathObservation<DataPathObject> {
  return { obj, ignored: false, node: 'node-a', processingNode: obj?.status?.node, finalizer: FINALIZER, hostingPodCached: false, cancelSeenAt: undefined, now: NOW, ...more };
}

const mineIn = (phase: string) => dataPath('x').phase(phase).node('node-a').finalizers(FINALIZER);

describe('the first step of a reconcile', () => {
  it.each<[string, DataPathObservation<DataPathObject>, ReturnType<typeof dataPathStep>]>([
    ['a CR that is gone is forgotten', observe(undefined), { step: 'forget' }],
    ["a CR that is not cairn's is left alone", observe(dataPath('x').build(), { ignored: true }), { step: 'ignore' }],
    ['a New CR gets the finalizer first', observe(dataPath('x').build()), { step: 'add-finalizer' }],
    ['a New CR with the finalizer is claimed', observe(dataPath('x').finalizers(FINALIZER).build()), { step: 'new' }],
    ['a New CR canceled before anyone claimed it is Canceled', observe(dataPath('x').finalizers(FINALIZER).cancel().build()), { step: 'cancel-new' }],
    ['an Accepted CR of this node is prepared', observe(mineIn('Accepted').build()), { step: 'prepare' }],
    ['a Prepared CR of this node is prepared', observe(mineIn('Prepared').build()), { step: 'prepare' }],
    ["another node's Accepted CR is not touched", observe(dataPath('x').phase('Accepted').node('node-b').finalizers(FINALIZER).build()), { step: 'none' }],
    ['an InProgress CR of this node is followed', observe(mineIn('InProgress').build()), { step: 'run' }],
    ['a Canceling CR of this node is followed', observe(mineIn('Canceling').build()), { step: 'run' }],
    ["another node's InProgress CR is not touched", observe(dataPath('x').phase('InProgress').node('node-b').finalizers(FINALIZER).build()), { step: 'none' }],
    ['a running CR being deleted is marked for cancel', observe(mineIn('InProgress').deleting().build()), { step: 'cancel-deleting' }],
    ['a finished CR of this node is cleaned up, then loses its finalizer', observe(mineIn('Completed').build()), { step: 'finished', cleanUp: true, removeFinalizer: true }],
    ['a finished CR whose finalizer is gone is cleaned up while its pod is cached', observe(dataPath('x').phase('Failed').node('node-a').build(), { hostingPodCached: true }), { step: 'finished', cleanUp: true, removeFinalizer: false }],
    ["another node's finished CR is not cleaned up here", observe(dataPath('x').phase('Canceled').node('node-b').finalizers(FINALIZER).build()), { step: 'finished', cleanUp: false, removeFinalizer: true }],
    ['a cancel seen 5 min ago on an Accepted CR is forced', observe(mineIn('Accepted').cancel().build(), { cancelSeenAt: NOW - CANCEL_DELAY_OTHERS_MS }), { step: 'force-cancel' }],
    ['a cancel seen just now is left to the data mover', observe(mineIn('InProgress').cancel().build(), { cancelSeenAt: NOW }), { step: 'run' }],
    ['a cancel on a running CR waits an hour before it is forced', observe(mineIn('InProgress').cancel().build(), { cancelSeenAt: NOW - CANCEL_DELAY_IN_PROGRESS_MS }), { step: 'force-cancel' }],
  ])('%s', (_title, observation, expected) => {
    expect(dataPathStep(observation)).toEqual(expected);
  });
});

describe('a New CR', () => {
  it.each<[string, Parameters<typeof newStep>[0], ReturnType<typeof newStep>]>([
    ['is claimed when the kind accepts and the prepare queue has room', { accept: { accept: true }, exposeOnGoing: 1, prepareQueueLength: 2 }, { step: 'claim' }],
    ['is claimed when the prepare queue is unbounded', { accept: { accept: true }, exposeOnGoing: 50, prepareQueueLength: 0 }, { step: 'claim' }],
    ['waits while the prepare queue is full', { accept: { accept: true }, exposeOnGoing: 2, prepareQueueLength: 2 }, { step: 'wait', retryAfterMs: REQUEUE_BUSY_MS, why: 'prepare queue is full' }],
    ['waits as the kind says', { accept: { accept: false, retryAfterMs: 3000, why: 'target PVC missing' }, exposeOnGoing: 0, prepareQueueLength: 0 }, { step: 'wait', retryAfterMs: 3000, why: 'target PVC missing' }],
    ['is left for its event when the kind declines without a retry', { accept: { accept: false }, exposeOnGoing: 0, prepareQueueLength: 0 }, { step: 'wait' }],
    ['fails unclaimed when the kind says no node can take it', { accept: { accept: false, fail: 'no node matches' }, exposeOnGoing: 0, prepareQueueLength: 0 }, { step: 'fail', message: 'no node matches' }],
  ])('%s', (_title, input, expected) => {
    expect(newStep(input)).toEqual(expected);
  });
});

describe('an Accepted or Prepared CR of this node', () => {
  const accepted = NOW - 60_000;
  const base = { exposedHere: false, now: NOW, prepareTimeoutMs: 30 * 60_000, ref: 'velero/x', short: 'PVB' };
  const cr = (phase: string) => dataPath('x').phase(phase).node('node-a').acceptedAt(new Date(accepted));
  it.each<[string, Parameters<typeof prepareStep>[0], ReturnType<typeof prepareStep>]>([
    ['is canceled when spec.cancel is set', { ...base, obj: cr('Accepted').cancel().build(), pod: undefined }, { step: 'cancel' }],
    ['carries on exposing while its pod is not made yet', { ...base, obj: cr('Accepted').build(), pod: undefined }, { step: 'expose' }],
    ['fails once the prepare timeout passed without a pod', { ...base, obj: cr('Accepted').build(), pod: undefined, now: accepted + 30 * 60_000 }, { step: 'timeout' }],
    ['is marked for cancel when the pod this instance made is gone', { ...base, exposedHere: true, obj: cr('Accepted').build(), pod: undefined }, { step: 'mark-cancel', message: 'Cancel PVB because the exposing pod velero/x is gone' }],
    ['is marked for cancel when its Prepared pod is gone', { ...base, obj: cr('Prepared').build(), pod: undefined }, { step: 'mark-cancel', message: 'Cancel PVB because the exposing pod velero/x is gone' }],
    ['is marked for cancel when its pod is being deleted', { ...base, obj: cr('Accepted').build(), pod: pod('x').running().deleting().build() }, { step: 'mark-cancel', message: 'Cancel PVB because the exposing pod velero/x is gone' }],
    ['waits while the pod is pending', { ...base, obj: cr('Accepted').build(), pod: pod('x').build() }, { step: 'wait', retryAfterMs: 2000 }],
    ['fails when the pod did not run within the prepare timeout', { ...base, obj: cr('Accepted').build(), pod: pod('x').build(), now: accepted + 30 * 60_000 }, { step: 'timeout' }],
    ['becomes Prepared once the pod runs', { ...base, obj: cr('Accepted').build(), pod: pod('x').running().build() }, { step: 'prepared' }],
    ['starts (watch, then InProgress) once Prepared with a running pod', { ...base, obj: cr('Prepared').build(), pod: pod('x').running().build() }, { step: 'start' }],
  ])('%s', (_title, input, expected) => {
    expect(prepareStep(input)).toEqual(expected);
  });

  it('is marked for cancel when its pod cannot ever run (image cannot be pulled)', () => {
    const step = prepareStep({ ...base, obj: cr('Accepted').build(), pod: pod('x').waiting('ErrImagePull', 'no such image').build() });
    expect(step).toMatchObject({ step: 'mark-cancel', message: expect.stringContaining('with expose error') });
  });
});

describe('an InProgress or Canceling CR of this node', () => {
  it.each<[string, Parameters<typeof runStep>[0], ReturnType<typeof runStep>]>([
    ['runs the kind\'s step before Completed once the data mover succeeded', { obj: dataPath('x').phase('InProgress').build(), beforeCompletedPending: true, watch: 'following', podFound: false }, { step: 'before-completed' }],
    ['resumes following its data mover after a restart', { obj: dataPath('x').phase('InProgress').build(), beforeCompletedPending: false, watch: 'none', podFound: true }, { step: 'follow', startWatch: true, canceling: false }],
    ['fails when the pod went while nobody watched (restart)', { obj: dataPath('x').phase('InProgress').build(), beforeCompletedPending: false, watch: 'none', podFound: false }, { step: 'pod-gone', phase: 'Failed' }],
    ['is Canceled when it was canceling and the pod went', { obj: dataPath('x').phase('Canceling').build(), beforeCompletedPending: false, watch: 'none', podFound: false }, { step: 'pod-gone', phase: 'Canceled' }],
    ['moves to Canceling on spec.cancel while watched', { obj: dataPath('x').phase('InProgress').cancel().build(), beforeCompletedPending: false, watch: 'following', podFound: false }, { step: 'follow', startWatch: false, canceling: true }],
    ['leaves a data mover whose end its watch records alone, whatever an older read says', { obj: dataPath('x').phase('InProgress').cancel().build(), beforeCompletedPending: false, watch: 'ended', podFound: true }, { step: 'recording' }],
    ['runs the step before Completed once the success is recorded, though its watch ended', { obj: dataPath('x').phase('InProgress').build(), beforeCompletedPending: true, watch: 'ended', podFound: true }, { step: 'before-completed' }],
    ['stays Canceling', { obj: dataPath('x').phase('Canceling').cancel().build(), beforeCompletedPending: false, watch: 'following', podFound: false }, { step: 'follow', startWatch: false, canceling: false }],
  ])('%s', (_title, input, expected) => {
    expect(runStep(input)).toEqual(expected);
  });
});

describe('the end of a data mover', () => {
  const result = { snapshotID: 's', totalBytes: 10 } as never;
  it.each<[string, Parameters<typeof watchEndStep>, ReturnType<typeof watchEndStep>]>([
    ['a success completes the CR', [{ outcome: 'completed', result }, { hasBeforeCompleted: false, failurePrefix: 'data path backup failed' }], { step: 'complete' }],
    ['a success goes through the kind\'s step first where it has one', [{ outcome: 'completed', result }, { hasBeforeCompleted: true, failurePrefix: 'x' }], { step: 'before-completed' }],
    ['a failure is Failed with the prefix', [{ outcome: 'failed', message: 'disk full' }, { hasBeforeCompleted: false, failurePrefix: 'data path backup failed' }], { step: 'finish', phase: 'Failed', message: 'data path backup failed: disk full', keepMessage: false }],
    ['a cancel keeps the reason already on the CR', [{ outcome: 'canceled', message: 'canceled by the user' }, { hasBeforeCompleted: false, failurePrefix: 'x' }], { step: 'finish', phase: 'Canceled', message: 'canceled by the user', keepMessage: true }],
  ])('%s', (_title, args, expected) => {
    expect(watchEndStep(...args)).toEqual(expected);
  });
});

describe('the load affinity of snapshot data movement', () => {
  const createdAt = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(createdAt.getTime() + ms);
  const base = { createdAt, now: createdAt, prepareTimeoutMs: 60_000, nodeLabels: { 'kubernetes.io/hostname': 'node-a', zone: 'z1' } };
  it.each<[string, Parameters<typeof loadAffinityDecision>[0], ReturnType<typeof loadAffinityDecision>]>([
    ['any node takes the work when no affinity applies', { ...base, affinity: undefined }, { accept: true }],
    ['a node whose labels match takes it', { ...base, affinity: { nodeSelector: { matchLabels: { zone: 'z1' } } } }, { accept: true }],
    [
      'a node that does not match leaves it to one that does',
      { ...base, affinity: { nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['node-a'] }] } } },
      { accept: false, retryAfterMs: AFFINITY_WAIT_RETRY_MS, why: "this node does not match the node agent's loadAffinity" },
    ],
    [
      'past the prepare timeout a node that does not match fails it (no matching node took it)',
      { ...base, now: at(60_000), affinity: { nodeSelector: { matchLabels: { zone: 'z2' } }, storageClass: 'fast' } },
      {
        accept: false,
        why: "this node does not match the node agent's loadAffinity for storage class fast",
        fail: "no node matching the node agent's loadAffinity for storage class fast took it within the prepare timeout (60s)",
      },
    ],
  ])('%s', (_title, input, expected) => {
    expect(loadAffinityDecision(input)).toEqual(expected);
  });
});
