/**
 * One pod on this node, driven to its desired state by a serialised sync loop: prepare volumes, run init
 * containers in order, then the containers, restart per policy with back-off, report status, and on deletion
 * stop everything within the grace period, clean the pod directory and delete the pod object with grace 0.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { restoreContainer } from './adoption.js';
import { containerConfig, containerId, type ApiServerAddress } from './container-config.js';
import { runHook } from './container-hooks.js';
import { startContainerProbers } from './container-probes.js';
import type { NodeFacts } from './env.js';
import type { EventRecorder } from './events.js';
import type { ExecTarget } from './exec-server.js';
import { resolveProgram } from './images.js';
import { errorMessage, type KubeletApi } from './kube-api.js';
import { SETUP_FAILED_EXIT } from './launch-script.js';
import { containerLogFile, pidFile, runtimeDir, terminationLogFile, type NodeLayout } from './layout.js';
import { terminationMessage } from './log-files.js';
import { removePodDir } from './pod-cleanup.js';
import { CsiNotReadyError, type CsiNodeClient } from './csi-volumes.js';
import { computePodStatus, conditionsFromApi, podPhase, type PodStatusJson, type RestartPolicy, type TerminatedState } from './pod-status.js';
import type { ProbeTarget } from './probes.js';
import { killGroup, readExitCode, startProcess, type ProcessExit, type RunningProcess } from './process-runtime.js';
import { logRunOf, type LogRun, type Slot } from './slot.js';
import { stopContainers } from './stop-containers.js';
import { prepareVolumes, VolumeNotReadyError, type PreparedVolumes } from './volumes.js';

export interface PodWorkerDeps {
  layout: NodeLayout;
  node: NodeFacts;
  api: KubeletApi;
  events: EventRecorder;
  log: Logger;
  repoDir: string;
  apiServer: ApiServerAddress;
  clusterCaPem: string;
  hostPath: string;
  bindShim?: string | undefined;
  backoff: { initialMs: number; maxMs: number };
  /** CSI node calls for CSI-backed PVs. */
  csi?: CsiNodeClient | undefined;
  /** Called once the pod is finished with (deleted and cleaned up). */
  onGone: (uid: string) => void;
}

export class PodWorker {
  private pod: V1Pod;
  private goneFromApi = false;
  private finished = false;
  private syncing = false;
  private again = false;
  private volumes: PreparedVolumes | undefined;
  private readonly slots: Slot[];
  private timer: NodeJS.Timeout | undefined;
  private lastStatusJson = '';
  private adopted = false;
  /** Set once the pod has finished for good: nothing is (re)started any more. */
  private done = false;
  private volumeRetryMs = 1000;
  private readonly startTime: Date;
  readonly uid: string;

  constructor(
    pod: V1Pod,
    private readonly deps: PodWorkerDeps,
  ) {
    this.pod = pod;
    this.uid = pod.metadata?.uid ?? '';
    this.startTime = pod.status?.startTime ? new Date(pod.status.startTime) : new Date();
    const mk = (spec: V1Container, init: boolean): Slot => ({
      spec,
      init,
      sidecar: init && spec.restartPolicy === 'Always',
      record: {
        name: spec.name,
        image: spec.image ?? '',
        restartCount: 0,
        current: { state: 'waiting', reason: 'PodInitializing' },
        sidecar: init && spec.restartPolicy === 'Always',
      },
      stopping: false,
      probers: [],
      nextBackoffMs: deps.backoff.initialMs,
      backoffUntil: 0,
      pullFailed: false,
    });
    this.slots = [...(pod.spec?.initContainers ?? []).map((c) => mk(c, true)), ...(pod.spec?.containers ?? []).map((c) => mk(c, false))];
    // Like the kubelet: containers wait in PodInitializing behind init containers, else in ContainerCreating.
    const firstReason = this.slots.some((s) => s.init) ? 'PodInitializing' : 'ContainerCreating';
    for (const s of this.slots) if (!s.init) s.record.current = { state: 'waiting', reason: firstReason };
  }

  update(pod: V1Pod): void {
    this.pod = pod;
    this.kick();
  }

  /** The API object is gone (force-deleted, or deleted while we were down). */
  removedFromApi(): void {
    this.goneFromApi = true;
    this.kick();
  }

  kick(): void {
    if (this.finished) return;
    if (this.syncing) {
      this.again = true;
      return;
    }
    this.syncing = true;
    void (async () => {
      do {
        this.again = false;
        try {
          await this.sync();
        } catch (err) {
          this.deps.log.error({ pod: this.key(), err: errorMessage(err) }, 'pod sync failed; retrying');
          this.retryIn(2000);
        }
      } while (this.again && !this.finished);
      this.syncing = false;
    })();
  }

  private key(): string {
    return `${this.pod.metadata?.namespace ?? ''}/${this.pod.metadata?.name ?? ''}`;
  }

  private retryIn(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ms);
  }

  private restartPolicy(): RestartPolicy {
    return (this.pod.spec?.restartPolicy as RestartPolicy | undefined) ?? 'Always';
  }

  private async sync(): Promise<void> {
    if (this.finished) return;
    if (!this.adopted) {
      this.adopted = true;
      await this.adoptPreviousRuns();
    }
    if (this.goneFromApi || this.pod.metadata?.deletionTimestamp) {
      await this.terminate();
      return;
    }
    const phase = this.pod.status?.phase;
    if ((phase === 'Succeeded' || phase === 'Failed') && this.slots.every((s) => !s.proc)) return;

    if (!this.volumes) {
      try {
        this.volumes = await prepareVolumes({
          pod: this.pod,
          layout: this.deps.layout,
          node: this.deps.node,
          api: this.deps.api,
          clusterCaPem: this.deps.clusterCaPem,
          csi: this.deps.csi,
        });
      } catch (err) {
        const message = err instanceof VolumeNotReadyError || err instanceof CsiNotReadyError ? err.message : `volume setup failed: ${errorMessage(err)}`;
        this.deps.events.record({ pod: this.pod, type: 'Warning', reason: 'FailedMount', message });
        await this.writeStatus(false);
        // Retry soon at first, then less often, so a missing Secret does not flood the event list.
        this.retryIn(this.volumeRetryMs);
        this.volumeRetryMs = Math.min(this.volumeRetryMs * 2, 30_000);
        return;
      }
    }

    let initialized = true;
    for (const s of this.slots.filter((x) => x.init)) {
      const proceed = await this.driveInit(s);
      if (!proceed) {
        initialized = false;
        break;
      }
    }
    if (initialized) {
      for (const s of this.slots.filter((x) => !x.init)) await this.driveContainer(s);
    }
    await this.stopSidecarsOfFinishedPod(initialized);
    await this.writeStatus(initialized);
  }

  /** When a pod's regular containers are done for good (Succeeded/Failed), its sidecars are stopped too. */
  private async stopSidecarsOfFinishedPod(initialized: boolean): Promise<void> {
    const sidecars = this.slots.filter((s) => s.sidecar && s.proc);
    if (sidecars.length === 0) return;
    const phase = podPhase({
      restartPolicy: this.restartPolicy(),
      initContainers: this.slots.filter((s) => s.init).map((s) => s.record),
      containers: this.slots.filter((s) => !s.init).map((s) => s.record),
      initialized,
    });
    if (phase !== 'Succeeded' && phase !== 'Failed') return;
    this.done = true;
    await this.stopAll(this.pod.spec?.terminationGracePeriodSeconds ?? 30);
  }

  /** True when the next init container may start. */
  private async driveInit(s: Slot): Promise<boolean> {
    const cur = s.record.current;
    if (s.sidecar) {
      if (s.proc || this.done) return true;
      if (cur.state === 'terminated' || s.record.last) await this.restartOrWait(s);
      else await this.start(s);
      return s.proc !== undefined;
    }
    if (cur.state === 'terminated' && cur.exitCode === 0) return true;
    if (s.proc) return false;
    if (cur.state === 'terminated' || (cur.state === 'waiting' && s.record.last)) {
      if (this.restartPolicy() === 'Never') return false;
      await this.restartOrWait(s);
      return false;
    }
    await this.start(s);
    return false;
  }

  private async driveContainer(s: Slot): Promise<void> {
    if (s.proc) return;
    const cur = s.record.current;
    const hasRun = cur.state === 'terminated' || s.record.last !== undefined;
    if (!hasRun) {
      await this.start(s);
      return;
    }
    const policy = this.restartPolicy();
    const lastExit = cur.state === 'terminated' ? cur.exitCode : (s.record.last?.exitCode ?? 0);
    if (policy === 'Never' || (policy === 'OnFailure' && lastExit === 0)) return;
    await this.restartOrWait(s);
  }

  /** Restart now if the back-off has passed, else show CrashLoopBackOff and come back when it has. */
  private async restartOrWait(s: Slot): Promise<void> {
    const now = Date.now();
    if (now < s.backoffUntil) {
      if (s.record.current.state === 'terminated') {
        s.record.last = s.record.current;
        const waitS = Math.ceil(s.nextBackoffMs / 2 / 1000);
        s.record.current = {
          state: 'waiting',
          reason: 'CrashLoopBackOff',
          message: `back-off ${waitS}s restarting failed container=${s.spec.name} pod=${this.pod.metadata?.name ?? ''}_${this.pod.metadata?.namespace ?? ''}(${this.uid})`,
        };
        this.deps.events.record({ pod: this.pod, fieldPath: this.fieldPath(s), type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container' });
      }
      this.retryIn(s.backoffUntil - now + 10);
      return;
    }
    if (s.record.current.state === 'terminated') s.record.last = s.record.current;
    s.record.restartCount += 1;
    await this.start(s);
  }

  private fieldPath(s: Slot): string {
    return `spec.${s.init ? 'initContainers' : 'containers'}{${s.spec.name}}`;
  }

  private podRef() {
    const m = this.pod.metadata ?? {};
    return { namespace: m.namespace ?? 'default', name: m.name ?? '', uid: this.uid };
  }

  private async start(s: Slot): Promise<void> {
    if (this.done) return;
    if (s.pullFailed) {
      // As the kubelet does after a failed pull: it backs off and says so (ImagePullBackOff) from then on.
      const cur = s.record.current;
      if (cur.state === 'waiting' && cur.reason === 'ErrImagePull') {
        const message = `Back-off pulling image "${s.spec.image ?? ''}"`;
        s.record.current = { state: 'waiting', reason: 'ImagePullBackOff', message };
        this.deps.events.record({ pod: this.pod, fieldPath: this.fieldPath(s), type: 'Normal', reason: 'BackOff', message });
      }
      return;
    }
    const { layout } = this.deps;
    const restartCount = s.record.restartCount;
    const tlog = terminationLogFile(layout, this.uid, s.spec.name, restartCount);
    const cfg = await containerConfig({
      pod: this.pod,
      container: s.spec,
      volumes: this.volumes?.volumes ?? new Map(),
      node: this.deps.node,
      lookup: this.deps.api.envLookup(),
      repoDir: this.deps.repoDir,
      apiServer: this.deps.apiServer,
      terminationLogFile: tlog,
      hostPath: this.deps.hostPath,
      bindShim: this.deps.bindShim,
      hostDirs: [layout.rootDir, this.deps.repoDir],
    });
    const fieldPath = this.fieldPath(s);
    if (!cfg.ok) {
      s.record.current = { state: 'waiting', reason: cfg.reason, message: cfg.message };
      if (cfg.reason === 'ErrImagePull') {
        s.pullFailed = true;
        this.deps.events.record({ pod: this.pod, fieldPath, type: 'Warning', reason: 'Failed', message: `Failed to pull image "${s.spec.image ?? ''}": ${cfg.message}` });
        this.deps.events.record({ pod: this.pod, fieldPath, type: 'Warning', reason: 'Failed', message: 'Error: ErrImagePull' });
        this.retryIn(1000);
      } else {
        this.deps.events.record({ pod: this.pod, fieldPath, type: 'Warning', reason: 'Failed', message: `Error: ${cfg.message}` });
        this.retryIn(3000);
      }
      return;
    }
    this.deps.events.record({ pod: this.pod, fieldPath, type: 'Normal', reason: 'Pulled', message: `Container image "${s.spec.image ?? ''}" already present on machine` });
    const logFile = containerLogFile(layout, this.podRef(), s.spec.name, restartCount);
    const proc = await startProcess({
      launch: cfg.launch,
      env: cfg.env,
      logFile,
      terminationLogFile: tlog,
      runtimeDir: runtimeDir(layout, this.uid, s.spec.name),
      pidFile: pidFile(layout, this.uid, s.spec.name),
      restartCount,
    });
    this.deps.events.record({ pod: this.pod, fieldPath, type: 'Normal', reason: 'Created', message: `Created container ${s.spec.name}` });
    this.deps.events.record({ pod: this.pod, fieldPath, type: 'Normal', reason: 'Started', message: `Started container ${s.spec.name}` });
    this.deps.log.info({ pod: this.key(), container: s.spec.name, pid: proc.pid, restartCount }, 'container started');
    this.attach(s, proc, restartCount, cfg.env);
    const postStart = s.spec.lifecycle?.postStart;
    if (postStart && (await proc.ready)) {
      const graceMs = (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
      const result = await runHook(postStart, this.hookTarget(s, proc, cfg.env), graceMs);
      if (!result.ok && s.proc === proc) {
        this.deps.events.record({ pod: this.pod, fieldPath, type: 'Warning', reason: 'FailedPostStartHook', message: result.message });
        killGroup(proc.pid, 'SIGKILL');
      }
    }
  }

  private hookTarget(s: Slot, proc: RunningProcess, env: ReadonlyMap<string, string>): ProbeTarget {
    return {
      podIp: this.deps.node.nodeIp,
      container: s.spec,
      pid: proc.pid,
      env,
      runAsUser: s.spec.securityContext?.runAsUser ?? this.pod.spec?.securityContext?.runAsUser,
      runAsGroup: s.spec.securityContext?.runAsGroup ?? this.pod.spec?.securityContext?.runAsGroup,
    };
  }

  private attach(s: Slot, proc: RunningProcess, restartCount: number, env: ReadonlyMap<string, string>): void {
    s.proc = proc;
    s.env = env;
    s.record.containerId = containerId(this.uid, s.spec.name, restartCount);
    s.record.current = { state: 'running', startedAt: proc.startedAt };
    this.startProbers(s, proc, env);
    s.settled = proc.exited
      .then((exit) => this.onExit(s, proc, restartCount, exit))
      .catch((err: unknown) => this.deps.log.error({ pod: this.key(), err: errorMessage(err) }, 'recording container exit failed'));
  }

  /** Readiness decides `ready`; a failed liveness probe restarts the container (per restartPolicy). */
  private startProbers(s: Slot, proc: RunningProcess, env: ReadonlyMap<string, string>): void {
    s.record.ready = s.spec.readinessProbe ? false : undefined;
    s.probers = startContainerProbers({
      pod: this.pod,
      container: s.spec,
      proc,
      env,
      nodeIp: this.deps.node.nodeIp,
      events: this.deps.events,
      fieldPath: this.fieldPath(s),
      isCurrent: () => s.proc === proc,
      onReadiness: (ready) => {
        s.record.ready = ready;
        this.kick();
      },
      onStarted: (started) => {
        s.record.started = started;
        this.kick();
      },
    });
  }

  private async onExit(s: Slot, proc: RunningProcess, restartCount: number, exit: ProcessExit): Promise<void> {
    if (s.proc !== proc) return;
    const rtDir = runtimeDir(this.deps.layout, this.uid, s.spec.name);
    const recorded = await readExitCode(rtDir, restartCount);
    const exitCode = recorded ?? exit.exitCode ?? 137;
    const setupFailed = recorded === undefined && exitCode === SETUP_FAILED_EXIT;
    const reason = setupFailed ? 'StartError' : exitCode === 0 ? 'Completed' : 'Error';
    const message = await terminationMessage({
      terminationLogFile: terminationLogFile(this.deps.layout, this.uid, s.spec.name, restartCount),
      logFile: containerLogFile(this.deps.layout, this.podRef(), s.spec.name, restartCount),
      policy: s.spec.terminationMessagePolicy,
      exitCode,
    });
    const term: TerminatedState = {
      state: 'terminated',
      exitCode,
      ...(exit.signal ? { signal: exit.signal } : {}),
      reason,
      message,
      startedAt: proc.startedAt,
      finishedAt: new Date(),
    };
    s.proc = undefined;
    for (const p of s.probers.splice(0)) p.stop();
    s.record.ready = undefined;
    s.record.started = undefined;
    s.record.current = term;
    this.deps.log.info({ pod: this.key(), container: s.spec.name, exitCode, reason }, 'container exited');
    if (!s.stopping && exitCode !== 0) {
      // Back-off grows with each failure and resets after the container ran ten minutes.
      const ranMs = term.finishedAt.getTime() - term.startedAt.getTime();
      if (ranMs > 600_000) s.nextBackoffMs = this.deps.backoff.initialMs;
      s.backoffUntil = Date.now() + s.nextBackoffMs;
      s.nextBackoffMs = Math.min(s.nextBackoffMs * 2, this.deps.backoff.maxMs);
    } else if (!s.stopping) {
      s.backoffUntil = Date.now() + this.deps.backoff.initialMs;
    }
    if (s.init && !s.sidecar && exitCode !== 0) {
      this.deps.log.info({ pod: this.key(), container: s.spec.name }, 'init container failed');
    }
    this.kick();
  }

  private async writeStatus(initialized: boolean): Promise<void> {
    const status: PodStatusJson = computePodStatus({
      restartPolicy: this.restartPolicy(),
      initContainers: this.slots.filter((s) => s.init).map((s) => s.record),
      containers: this.slots.filter((s) => !s.init).map((s) => s.record),
      initialized,
      sandboxReady: this.volumes !== undefined,
      nodeIp: this.deps.node.nodeIp,
      podStartTime: this.startTime,
      previousConditions: conditionsFromApi(this.pod.status?.conditions),
      now: new Date(),
    });
    const json = JSON.stringify(status);
    if (json === this.lastStatusJson) return;
    const m = this.pod.metadata ?? {};
    await this.deps.api.patchPodStatus(m.namespace ?? 'default', m.name ?? '', status);
    this.lastStatusJson = json;
  }

  /** Rebuilds container state from the pod's reported status and the run records of a previous kubelet. */
  private async adoptPreviousRuns(): Promise<void> {
    const statuses = [...(this.pod.status?.initContainerStatuses ?? []), ...(this.pod.status?.containerStatuses ?? [])];
    for (const s of this.slots) {
      const st = statuses.find((x) => x.name === s.spec.name);
      if (!st) continue;
      const restored = await restoreContainer(st, runtimeDir(this.deps.layout, this.uid, s.spec.name));
      s.record.restartCount = restored.restartCount;
      s.record.last = restored.last;
      if (restored.current) s.record.current = restored.current;
      if (restored.proc) {
        this.deps.log.info({ pod: this.key(), container: s.spec.name, pid: restored.proc.pid }, 'adopted running container');
        this.attach(s, restored.proc, restored.restartCount, new Map([['PATH', this.deps.hostPath]]));
      }
    }
  }

  /** Deletion: SIGTERM, grace period, SIGKILL; clean the pod dir (never PV data); delete the object. */
  private async terminate(): Promise<void> {
    const meta = this.pod.metadata ?? {};
    const grace = meta.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30;
    await this.stopAll(grace);
    if (!this.goneFromApi) await this.writeStatus(true).catch(() => undefined);
    await this.cleanup();
    if (!this.goneFromApi) await this.deps.api.finalDelete(meta.namespace ?? 'default', meta.name ?? '', this.uid);
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.deps.log.info({ pod: this.key() }, 'pod terminated and cleaned up');
    this.deps.onGone(this.uid);
  }

  /** Stops every running container of the pod within `graceSeconds`: containers first, then sidecars. */
  async stopAll(graceSeconds: number): Promise<void> {
    const deadline = Date.now() + Math.max(graceSeconds, 0) * 1000;
    const stop = (slots: Slot[]) =>
      stopContainers({
        slots,
        deadline,
        hookTarget: (s, proc) => this.hookTarget(s, proc, s.env ?? new Map()),
        event: (s, e) => this.deps.events.record({ pod: this.pod, fieldPath: this.fieldPath(s), ...e }),
      });
    await stop(this.slots.filter((s) => s.proc && !s.sidecar));
    await stop(this.slots.filter((s) => s.proc && s.sidecar));
  }

  private async cleanup(): Promise<void> {
    const csi = this.deps.csi;
    const left = await removePodDir({
      layout: this.deps.layout,
      uid: this.uid,
      slots: this.slots,
      beforeUnmount: csi && (() => csi.unpublishPod(this.uid).catch((err: unknown) => {
        // The pod's own unmount below still detaches the target; the driver's staging mount may stay behind.
        this.deps.log.error({ pod: this.key(), err: errorMessage(err) }, 'CSI unpublish failed');
      })),
    });
    if (left) this.deps.log.error({ pod: this.key(), dir: left }, 'pod directory still has mounts; leaving it in place');
  }

  /** Which run's log to serve: the current one, or the one before it for `previous`. */
  logRun(container: string, previous: boolean): LogRun | { error: string } {
    const s = this.slots.find((x) => x.spec.name === container);
    if (!s) return { error: `container ${container} is not valid for pod ${this.pod.metadata?.name ?? ''}` };
    return logRunOf(s, { previous, logFile: (run) => containerLogFile(this.deps.layout, this.podRef(), container, run) });
  }

  /** What `exec` needs to run a command in a running container (the image mapping applies to it too). */
  execTarget(container: string, command: string[]): { target: ExecTarget } | { error: string } {
    const s = this.slots.find((x) => x.spec.name === container);
    if (!s) return { error: `container ${container} is not valid for pod ${this.pod.metadata?.name ?? ''}` };
    if (!s.proc) return { error: `container ${container} is not running` };
    const program = resolveProgram({ image: s.spec.image ?? '', command, repoDir: this.deps.repoDir });
    if (!program.ok) return { error: program.message };
    const t = this.hookTarget(s, s.proc, s.env ?? new Map([['PATH', this.deps.hostPath]]));
    return { target: { pid: t.pid, env: t.env, argv: program.argv, runAsUser: t.runAsUser, runAsGroup: t.runAsGroup, ready: s.proc.ready } };
  }

  /** Forget this pod without touching its processes (a simulated kubelet crash). */
  abandon(): void {
    for (const s of this.slots) for (const p of s.probers.splice(0)) p.stop();
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * Kubelet shutdown: stop containers with their grace periods, capped (like a node's shutdownGracePeriod) so
   * cluster:down never has to SIGKILL the kubelet; leave the API object and directory alone.
   */
  async shutdown(maxGraceSeconds: number): Promise<void> {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    await this.stopAll(Math.min(this.pod.spec?.terminationGracePeriodSeconds ?? 30, maxGraceSeconds));
  }
}
