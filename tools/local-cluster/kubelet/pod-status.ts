/**
 * Pod status from what the runtime knows, computed as the kubelet does (phase rules of its getPhase, the four
 * standard conditions, container statuses with state/lastState). Pure: times come in, JSON goes out.
 */

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface WaitingState {
  state: 'waiting';
  reason: string;
  message?: string | undefined;
}
export interface RunningState {
  state: 'running';
  startedAt: Date;
}
export interface TerminatedState {
  state: 'terminated';
  exitCode: number;
  signal?: number | undefined;
  reason: string;
  message?: string | undefined;
  startedAt: Date;
  finishedAt: Date;
}
export type RunState = WaitingState | RunningState | TerminatedState;

export interface ContainerRecord {
  name: string;
  image: string;
  restartCount: number;
  current: RunState;
  last?: TerminatedState | undefined;
  /** Stable per run: `cairn://<pod-uid>/<name>/<restartCount>`. */
  containerId?: string | undefined;
  /** A sidecar (init container with restartPolicy Always). */
  sidecar?: boolean | undefined;
  /** Readiness from its probe; a running container without a readiness probe is ready. */
  ready?: boolean | undefined;
  /** False while its startup probe has not passed. */
  started?: boolean | undefined;
}

export function isReady(c: ContainerRecord): boolean {
  return c.current.state === 'running' && c.ready !== false && c.started !== false;
}

export interface PodStatusInput {
  restartPolicy: RestartPolicy;
  initContainers: readonly ContainerRecord[];
  containers: readonly ContainerRecord[];
  /** All (non-sidecar) init containers completed successfully. */
  initialized: boolean;
  /** Volumes are ready and containers may start. */
  sandboxReady: boolean;
  nodeIp: string;
  podStartTime: Date;
  /** Previous conditions, to keep lastTransitionTime stable when a condition does not change. */
  previousConditions?: readonly PodConditionJson[] | undefined;
  now: Date;
}

export interface PodConditionJson {
  type: string;
  status: 'True' | 'False';
  reason?: string;
  lastTransitionTime: string;
  lastProbeTime: null;
}

type StateJson = Record<string, Record<string, string | number>>;

export interface ContainerStatusJson {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: StateJson;
  lastState: StateJson;
}

export interface PodStatusJson {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  conditions: PodConditionJson[];
  hostIP: string;
  hostIPs: { ip: string }[];
  podIP: string;
  podIPs: { ip: string }[];
  startTime: string;
  initContainerStatuses: ContainerStatusJson[];
  containerStatuses: ContainerStatusJson[];
}

/** The pod's current conditions as the API returned them (client-node parses times into Dates). */
export function conditionsFromApi(
  conditions: readonly { type: string; status: string; lastTransitionTime?: Date | undefined }[] | undefined,
): PodConditionJson[] | undefined {
  return conditions?.map((c) => ({
    type: c.type,
    status: c.status === 'True' ? 'True' : 'False',
    lastTransitionTime: c.lastTransitionTime ? kubeTime(new Date(c.lastTransitionTime)) : '',
    lastProbeTime: null,
  }));
}

/** metav1.Time wants RFC 3339 with whole seconds. */
export function kubeTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function podPhase(input: Pick<PodStatusInput, 'restartPolicy' | 'initContainers' | 'containers' | 'initialized'>): PodStatusJson['phase'] {
  const failedInit = input.initContainers.some(
    (c) => !c.sidecar && c.current.state === 'terminated' && c.current.exitCode !== 0,
  );
  if (failedInit && input.restartPolicy === 'Never') return 'Failed';
  if (!input.initialized) return 'Pending';
  let waiting = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of input.containers) {
    const s = c.current;
    if (s.state === 'running') running++;
    else if (s.state === 'terminated') {
      stopped++;
      if (s.exitCode === 0) succeeded++;
    } else if (c.last) stopped++;
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (input.restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (input.restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function stateJson(s: RunState | undefined): StateJson {
  if (!s) return {};
  if (s.state === 'waiting') return { waiting: { reason: s.reason, ...(s.message ? { message: s.message } : {}) } };
  if (s.state === 'running') return { running: { startedAt: kubeTime(s.startedAt) } };
  return {
    terminated: {
      exitCode: s.exitCode,
      ...(s.signal ? { signal: s.signal } : {}),
      reason: s.reason,
      ...(s.message ? { message: s.message } : {}),
      startedAt: kubeTime(s.startedAt),
      finishedAt: kubeTime(s.finishedAt),
    },
  };
}

export function containerStatusJson(c: ContainerRecord): ContainerStatusJson {
  const running = c.current.state === 'running';
  return {
    name: c.name,
    image: c.image,
    imageID: `cairn-local://${c.image}`,
    ...(c.containerId ? { containerID: c.containerId } : {}),
    ready: isReady(c),
    started: running && c.started !== false,
    restartCount: c.restartCount,
    state: stateJson(c.current),
    lastState: stateJson(c.last),
  };
}

function condition(
  type: string,
  ok: boolean,
  reason: string | undefined,
  input: PodStatusInput,
): PodConditionJson {
  const status = ok ? 'True' : 'False';
  const prev = input.previousConditions?.find((p) => p.type === type);
  const lastTransitionTime = prev && prev.status === status ? prev.lastTransitionTime : kubeTime(input.now);
  return { type, status, ...(reason && !ok ? { reason } : {}), lastTransitionTime, lastProbeTime: null };
}

export function computePodStatus(input: PodStatusInput): PodStatusJson {
  const phase = podPhase(input);
  const containersReady = input.containers.length > 0 && input.containers.every(isReady);
  const notReadyReason = phase === 'Succeeded' || phase === 'Failed' ? 'PodCompleted' : 'ContainersNotReady';
  const initialized = input.initialized || phase === 'Succeeded';
  const conditions = [
    condition('PodReadyToStartContainers', input.sandboxReady, undefined, input),
    condition('Initialized', initialized, 'ContainersNotInitialized', input),
    condition('Ready', containersReady, notReadyReason, input),
    condition('ContainersReady', containersReady, notReadyReason, input),
    condition('PodScheduled', true, undefined, input),
  ];
  const ips = [{ ip: input.nodeIp }];
  return {
    phase,
    conditions,
    hostIP: input.nodeIp,
    hostIPs: ips,
    podIP: input.nodeIp,
    podIPs: ips,
    startTime: kubeTime(input.podStartTime),
    initContainerStatuses: input.initContainers.map(containerStatusJson),
    containerStatuses: input.containers.map(containerStatusJson),
  };
}
