/**
 * The node-agent's data-path controller carrying out its decisions against an in-memory API server: claims (and
 * losing one to another node), cancel, resume after a restart and the phase transitions, each in milliseconds.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createDataPathController, type DataPathControllerContext, type DataPathKindSpec } from '../../../src/agent/controllers/data-path-controller.js';
import { CANCEL_DELAY_IN_PROGRESS_MS, CANCEL_DELAY_OTHERS_MS, type AcceptDecision, type DataPathObject } from '../../../src/agent/controllers/data-path-decisions.js';
import { NodeSlots } from '../../../src/agent/slots.js';
import type { Hub } from '../../../src/agent/watcher/hub.js';
import { Kinds } from '../../../src/api/index.js';
import { createLogger } from '../../../src/base/logger.js';
import { customClient } from '../../../src/kube/custom.js';
import { EventReasons } from '../../../src/agent/microservice/protocol.js';
import { dataPath, pod } from '../../support/builders.js';
import { FakeClock } from '../../support/fake-clock.js';
import { FakeKube } from '../../support/fake-kube.js';
import { waitFor } from '../../support/wait.js';

type Cr = DataPathObject & { spec: { cancel?: boolean }; status?: DataPathObject['status'] & { node?: string } };

const NS = 'velero';
const FINALIZER = 'velero.io/pvb-finalizer';
const KIND = Kinds.PodVolumeBackup;
const key = (name: string) => ({ namespace: NS, name });

/** A hub whose cache the test fills; it records who subscribed. */
function fakeHub<T extends { metadata?: { name?: string } }>(): Hub<T> & { items: Map<string, T[]>; subscribed: string[] } {
  const items = new Map<string, T[]>();
  const subscribed: string[] = [];
  return {
    items,
    subscribed,
    start: async () => undefined,
    stop: async () => undefined,
    subscribe: (k) => {
      subscribed.push(k);
      return () => undefined;
    },
    cached: (k) => items.get(k) ?? [],
    all: () => [...items.values()].flat(),
  };
}

/** One node agent: its controller over the shared fake API server, with a kind whose effects it records. */
function nodeAgent(fake: FakeKube, node: string, opts: { clock?: FakeClock; accept?: (obj: Cr) => Promise<AcceptDecision> } = {}) {
  const clock = opts.clock ?? new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const pods = new Map<string, V1Pod>();
  const hostingPods = fakeHub<V1Pod>();
  const events = fakeHub<CoreV1Event>();
  const did: string[] = [];
  const spec: DataPathKindSpec<Cr> = {
    kind: 'PodVolumeBackup',
    short: 'PVB',
    resource: KIND,
    client: customClient<Cr>(fake.kube(), KIND, (o) => o as Cr),
    finalizer: FINALIZER,
    ignored: () => false,
    describe: () => ({}),
    processingNode: (o) => o.status?.node,
    acceptDecision: opts.accept ?? (async () => ({ accept: true })),
    onAccepted: (o, n) => void (o.status = { ...o.status, node: n }),
    expose: async (o) => {
      const name = o.metadata?.name ?? '';
      did.push(`expose ${name}`);
      pods.set(name, pod(name).build());
      return { ready: true };
    },
    getExposed: async (name) => pods.get(name),
    cleanUp: async (o) => {
      did.push(`clean up ${o.metadata?.name}`);
      pods.delete(o.metadata?.name ?? '');
    },
    onCompleted: () => undefined,
    failurePrefix: 'data path backup failed',
  };
  const slots = new NodeSlots(1);
  const ctx: DataPathControllerContext = {
    kube: fake.kube(),
    namespace: NS,
    nodeName: node,
    logger: createLogger({ level: 'fatal' }),
    events,
    hostingPods,
    slots,
    exposeOnGoing: () => 0,
    prepareQueueLength: 0,
    prepareTimeoutMs: 30 * 60_000,
    eventWaitMs: 1000,
    progressWriteIntervalMs: 1000,
    clock,
  };
  return { controller: createDataPathController(spec, ctx), spec, pods, hostingPods, events, slots, did, clock };
}

function setup(...crs: Cr[]) {
  const fake = new FakeKube();
  for (const cr of crs) fake.put({ ...KIND, namespace: NS }, cr);
  const read = (name: string) => fake.get<Cr>({ ...KIND, namespace: NS }, name);
  return { fake, read };
}

/** The usual scene: an API server holding the CRs, pvb-1 among them, and node-a's agent; `reconcile` runs its controller on pvb-1. */
function nodeAWith(...crs: Cr[]) {
  const { fake, read } = setup(...crs);
  const agent = nodeAgent(fake, 'node-a');
  return { fake, read, agent, reconcile: () => agent.controller.reconcile(key('pvb-1')) };
}

describe('claiming a New CR', () => {
  it('Accepted by this node with a timestamp, a slot taken and the expose started', async () => {
    const { read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').finalizers(FINALIZER).build());
    expect(await reconcile()).toEqual({ requeueAfterMs: 2000 });
    expect(read('pvb-1')?.status).toMatchObject({ phase: 'Accepted', node: 'node-a', acceptedTimestamp: '2026-01-01T00:00:00Z' });
    expect(a.did).toEqual(['expose pvb-1']);
    expect(a.slots.inUse).toBe(1);
  });

  it('lost to another node that wrote first: the slot goes back and nothing is exposed', async () => {
    const { fake, read } = setup(dataPath('pvb-1').finalizers(FINALIZER).build());
    const b = nodeAgent(fake, 'node-b');
    // While node A decides, node B claims the same CR: A's write carries the version it read and fails.
    const a = nodeAgent(fake, 'node-a', { accept: async () => (await b.controller.reconcile(key('pvb-1')), { accept: true }) });
    expect(await a.controller.reconcile(key('pvb-1'))).toBeUndefined();
    expect(read('pvb-1')?.status).toMatchObject({ phase: 'Accepted', node: 'node-b' });
    expect(a.did).toEqual([]);
    expect(a.slots.inUse).toBe(0);
    expect(b.did).toEqual(['expose pvb-1']);
    // Node A sees another node's CR from now on and leaves it alone.
    expect(await a.controller.reconcile(key('pvb-1'))).toBeUndefined();
    expect(a.did).toEqual([]);
  });

  it('waits for a slot when the node runs as many as it may', async () => {
    const { read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').finalizers(FINALIZER).build(), dataPath('pvb-2').finalizers(FINALIZER).build());
    await reconcile();
    expect(await a.controller.reconcile(key('pvb-2'))).toEqual({ requeueAfterMs: 5000 });
    expect(read('pvb-2')?.status?.phase).toBeUndefined();
  });

  it('puts the finalizer on first, in its own write', async () => {
    const { read, reconcile } = nodeAWith(dataPath('pvb-1').build());
    await reconcile();
    expect(read('pvb-1')?.metadata?.finalizers).toEqual([FINALIZER]);
    expect(read('pvb-1')?.status?.phase).toBeUndefined();
  });
});

describe('phase transitions on this node', () => {
  it('Accepted → Prepared once the pod runs → InProgress (watch first) → Completed, then the finalizer goes', async () => {
    const { fake, read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').finalizers(FINALIZER).build());
    await reconcile();
    expect(await reconcile()).toEqual({ requeueAfterMs: 2000 });
    expect(read('pvb-1')?.status?.phase).toBe('Accepted');

    a.pods.set('pvb-1', pod('pvb-1').running().build());
    await reconcile();
    expect(read('pvb-1')?.status?.phase).toBe('Prepared');

    await a.clock.settle(5000);
    await reconcile();
    expect(read('pvb-1')?.status).toMatchObject({ phase: 'InProgress', startTimestamp: '2026-01-01T00:00:05Z' });
    expect(a.hostingPods.subscribed).toEqual(['pvb-1']);

    // The watcher's outcome (here written as the controller would) ends it; the next reconcile cleans up.
    await fake.custom.replaceNamespacedCustomObject({ ...KIND, namespace: NS, name: 'pvb-1', body: { ...read('pvb-1'), status: { ...read('pvb-1')?.status, phase: 'Completed' } } });
    await reconcile();
    expect(a.did).toEqual(['expose pvb-1', 'clean up pvb-1']);
    expect(read('pvb-1')?.metadata?.finalizers).toEqual([]);
    expect(a.slots.inUse).toBe(0);
  });

  it('fails a CR whose pod did not run within the prepare timeout', async () => {
    const { read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').finalizers(FINALIZER).build());
    await reconcile();
    await a.clock.settle(30 * 60_000);
    await reconcile();
    expect(read('pvb-1')?.status).toMatchObject({ phase: 'Failed', message: 'timeout on preparing PVB' });
    expect(a.did).toEqual(['expose pvb-1', 'clean up pvb-1']);
  });
});

describe('cancel', () => {
  it('a New CR no node may take is Failed unclaimed with the reason, and no slot or expose is spent on it', async () => {
    const { fake, read } = setup(dataPath('pvb-1').finalizers(FINALIZER).build());
    const a = nodeAgent(fake, 'node-a', { accept: async () => ({ accept: false, fail: 'no node matching the load affinity took it' }) });
    expect(await a.controller.reconcile(key('pvb-1'))).toBeUndefined();
    expect(read('pvb-1')?.status).toMatchObject({ phase: 'Failed', message: 'no node matching the load affinity took it', completionTimestamp: '2026-01-01T00:00:00Z' });
    expect(a.did).toEqual([]);
    expect(a.slots.inUse).toBe(0);
  });

  it('a CR another node claimed meanwhile is not failed by a node that may not take it', async () => {
    const { fake, read } = setup(dataPath('pvb-1').finalizers(FINALIZER).build());
    const b = nodeAgent(fake, 'node-b');
    const a = nodeAgent(fake, 'node-a', { accept: async () => (await b.controller.reconcile(key('pvb-1')), { accept: false, fail: 'no node may take it' }) });
    await a.controller.reconcile(key('pvb-1'));
    expect(read('pvb-1')?.status).toMatchObject({ phase: 'Accepted', node: 'node-b' });
  });

  it('a New CR canceled before anyone claimed it is Canceled without an expose', async () => {
    const { read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').finalizers(FINALIZER).cancel().build());
    await reconcile();
    expect(read('pvb-1')?.status?.phase).toBe('Canceled');
    expect(a.did).toEqual([]);
  });

  it('an Accepted CR canceled is cleaned up and Canceled', async () => {
    const { read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').phase('Accepted').node('node-a').finalizers(FINALIZER).cancel().build());
    await reconcile();
    expect(read('pvb-1')?.status?.phase).toBe('Canceled');
    expect(a.did).toEqual(['clean up pvb-1']);
  });

  it('an InProgress CR canceled moves to Canceling and is left to its data mover, forced Canceled after an hour', async () => {
    const { read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').phase('InProgress').node('node-a').finalizers(FINALIZER).cancel().build());
    a.pods.set('pvb-1', pod('pvb-1').running().build());
    await reconcile();
    expect(read('pvb-1')?.status?.phase).toBe('Canceling');
    await a.clock.settle(CANCEL_DELAY_OTHERS_MS);
    await reconcile();
    expect(read('pvb-1')?.status?.phase).toBe('Canceling');
    // An hour after the cancel was first seen, the data mover has had its chance: Canceled, cleaned up.
    await a.clock.settle(CANCEL_DELAY_IN_PROGRESS_MS - CANCEL_DELAY_OTHERS_MS);
    await reconcile();
    expect(read('pvb-1')?.status?.phase).toBe('Canceled');
    expect(a.did).toEqual(['clean up pvb-1']);
  });

  it('a CR being deleted while it runs is marked for cancel', async () => {
    const { read, reconcile } = nodeAWith(dataPath('pvb-1').phase('Prepared').node('node-a').finalizers(FINALIZER).deleting().build());
    await reconcile();
    expect(read('pvb-1')?.spec.cancel).toBe(true);
    expect(read('pvb-1')?.status?.message).toBe('Cancel PVB because it is being deleted');
  });
});

describe('resume after a restart', () => {
  it('an InProgress CR whose pod still runs is followed again by the new instance', async () => {
    const { read, agent: restarted, reconcile } = nodeAWith(dataPath('pvb-1').phase('InProgress').node('node-a').finalizers(FINALIZER).build());
    restarted.pods.set('pvb-1', pod('pvb-1').running().build());
    await reconcile();
    expect(read('pvb-1')?.status?.phase).toBe('InProgress');
    expect(restarted.hostingPods.subscribed).toEqual(['pvb-1']);
    expect(restarted.slots.inUse).toBe(1);
  });

  it('an InProgress CR whose pod went while the node agent was down fails with the reason', async () => {
    const { read, reconcile } = nodeAWith(dataPath('pvb-1').phase('InProgress').node('node-a').finalizers(FINALIZER).build());
    await reconcile();
    expect(read('pvb-1')?.status).toMatchObject({ phase: 'Failed', message: 'data path backup failed: data-mover pod velero/pvb-1 is gone' });
  });

  it('an Accepted CR whose expose was cut short is exposed again', async () => {
    const { read, agent: restarted, reconcile } = nodeAWith(dataPath('pvb-1').phase('Accepted').node('node-a').finalizers(FINALIZER).acceptedAt(new Date('2026-01-01T00:00:00Z')).build());
    expect(await reconcile()).toEqual({ requeueAfterMs: 2000 });
    expect(restarted.did).toEqual(['expose pvb-1']);
    expect(read('pvb-1')?.status?.phase).toBe('Accepted');
  });

  it('a Prepared CR whose pod vanished is marked for cancel', async () => {
    const { read, reconcile } = nodeAWith(dataPath('pvb-1').phase('Prepared').node('node-a').finalizers(FINALIZER).build());
    await reconcile();
    expect(read('pvb-1')?.spec.cancel).toBe(true);
  });
});

describe('the end of the data mover', () => {
  it('is recorded once: a reconcile that read the CR before the record does not follow the finished pod again', async () => {
    const { read, agent: a, reconcile } = nodeAWith(dataPath('pvb-1').phase('InProgress').node('node-a').finalizers(FINALIZER).build());
    const readBeforeTheEnd = read('pvb-1')!;
    // The data mover has ended: its last Event is cached and its pod Succeeded with the result.
    const ended = pod('pvb-1').succeeded('uid-pvb-1', JSON.stringify({ snapshotID: 'snap-1', totalBytes: 10 })).build();
    a.events.items.set('PodVolumeBackup/pvb-1', [{ metadata: { name: 'ev-1', uid: 'ev-1', resourceVersion: '7' }, involvedObject: {}, reason: EventReasons.Stopped, message: 'stopped' }]);
    a.pods.set('pvb-1', ended);
    await reconcile();
    await waitFor(() => read('pvb-1')?.status?.phase === 'Completed' && a.did.length > 0, { timeoutMs: 5000, description: 'the outcome recorded' });
    expect(a.did).toEqual(['clean up pvb-1']);

    // The pod lingers in the cache while it is deleted, and a reconcile queued before the record reads the CR as
    // it was then: it must not follow the pod again (its log re-emitted, the outcome recorded a second time).
    a.pods.set('pvb-1', ended);
    const live = a.spec.client;
    a.spec.client = { ...live, get: async () => structuredClone(readBeforeTheEnd) };
    await reconcile();
    expect(a.hostingPods.subscribed).toEqual(['pvb-1']);
    expect(a.did).toEqual(['clean up pvb-1']);

    // The next reconcile reads it Completed: the finalizer goes, the slot is free.
    a.spec.client = live;
    await reconcile();
    expect(read('pvb-1')?.metadata?.finalizers).toEqual([]);
    expect(a.slots.inUse).toBe(0);
  });
});
