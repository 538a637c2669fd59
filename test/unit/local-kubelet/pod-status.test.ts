import { describe, expect, it } from 'vitest';
import { computePodStatus, podPhase, type ContainerRecord, type RunState } from '../../../tools/local-cluster/kubelet/pod-status.js';

const t0 = new Date('2026-01-01T00:00:00.123Z');
const t1 = new Date('2026-01-01T00:00:05.000Z');
const running: RunState = { state: 'running', startedAt: t0 };
const done = (exitCode: number): RunState => ({ state: 'terminated', exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: t0, finishedAt: t1 });
const c = (name: string, current: RunState, extra: Partial<ContainerRecord> = {}): ContainerRecord => ({ name, image: 'busybox', restartCount: 0, current, ...extra });

describe('pod phase (the kubelet getPhase rules)', () => {
  const base = { initContainers: [], initialized: true };
  it.each([
    ['Never', [done(0), done(0)], 'Succeeded'],
    ['Never', [done(0), done(1)], 'Failed'],
    ['OnFailure', [done(1)], 'Running'],
    ['OnFailure', [done(0)], 'Succeeded'],
    ['Always', [done(0)], 'Running'],
    ['Always', [running, done(1)], 'Running'],
    ['Never', [running, { state: 'waiting', reason: 'ContainerCreating' }], 'Pending'],
  ] as const)('%s with %j → %s', (restartPolicy, states, phase) => {
    const containers = states.map((s, i) => c(`c${i}`, s));
    expect(podPhase({ ...base, restartPolicy, containers })).toBe(phase);
  });

  it('is Pending until init containers are done and Failed when one fails under Never', () => {
    const containers = [c('app', { state: 'waiting', reason: 'PodInitializing' })];
    expect(podPhase({ restartPolicy: 'Always', initContainers: [c('init', running)], containers, initialized: false })).toBe('Pending');
    expect(podPhase({ restartPolicy: 'Never', initContainers: [c('init', done(2))], containers, initialized: false })).toBe('Failed');
    expect(podPhase({ restartPolicy: 'OnFailure', initContainers: [c('init', done(2))], containers, initialized: false })).toBe('Pending');
  });

  it('a container in back-off that ran before counts as stopped, not waiting', () => {
    const backoff = c('app', { state: 'waiting', reason: 'CrashLoopBackOff' }, { last: done(1) as never, restartCount: 1 });
    expect(podPhase({ restartPolicy: 'Always', initContainers: [], containers: [backoff], initialized: true })).toBe('Running');
  });
});

describe('pod status JSON', () => {
  it('reports conditions, IPs and container states like the kubelet', () => {
    const s = computePodStatus({
      restartPolicy: 'Never',
      initContainers: [c('init', done(0))],
      containers: [c('app', running, { containerId: 'cairn://u/app/0' }), c('side', done(3), { last: done(1) as never, restartCount: 1 })],
      initialized: true,
      sandboxReady: true,
      nodeIp: '127.0.0.3',
      podStartTime: t0,
      now: t1,
    });
    expect(s.phase).toBe('Running');
    expect(s.podIP).toBe('127.0.0.3');
    expect(s.hostIPs).toEqual([{ ip: '127.0.0.3' }]);
    expect(s.startTime).toBe('2026-01-01T00:00:00Z');
    expect(Object.fromEntries(s.conditions.map((x) => [x.type, x.status]))).toEqual({
      PodReadyToStartContainers: 'True',
      Initialized: 'True',
      Ready: 'False',
      ContainersReady: 'False',
      PodScheduled: 'True',
    });
    expect(s.conditions.find((x) => x.type === 'Ready')?.reason).toBe('ContainersNotReady');
    expect(s.containerStatuses[0]).toMatchObject({ name: 'app', ready: true, started: true, containerID: 'cairn://u/app/0', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } });
    expect(s.containerStatuses[1]).toMatchObject({
      ready: false,
      restartCount: 1,
      state: { terminated: { exitCode: 3, reason: 'Error', finishedAt: '2026-01-01T00:00:05Z' } },
      lastState: { terminated: { exitCode: 1 } },
    });
    expect(s.initContainerStatuses[0]?.state).toMatchObject({ terminated: { exitCode: 0, reason: 'Completed' } });
  });

  it('keeps lastTransitionTime of unchanged conditions', () => {
    const input = {
      restartPolicy: 'Always' as const,
      initContainers: [],
      containers: [c('app', running)],
      initialized: true,
      sandboxReady: true,
      nodeIp: '127.0.0.2',
      podStartTime: t0,
      now: t1,
      previousConditions: [{ type: 'Ready', status: 'True' as const, lastTransitionTime: '2025-12-31T00:00:00Z', lastProbeTime: null }],
    };
    const s = computePodStatus(input);
    expect(s.conditions.find((x) => x.type === 'Ready')?.lastTransitionTime).toBe('2025-12-31T00:00:00Z');
    expect(s.conditions.find((x) => x.type === 'Initialized')?.lastTransitionTime).toBe('2026-01-01T00:00:05Z');
  });
});
