/**
 * One simulated node: registers the Node, watches the pods bound to it (fieldSelector spec.nodeName) and keeps
 * one PodWorker per pod uid, serves the kubelet API, and on start cleans up pods deleted while it was down.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import type { Server } from 'node:https';
import { KubeConfig, ListWatch, Watch, VersionApi, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ensureBindShim } from './bind-shim.js';
import type { ApiServerAddress } from './container-config.js';
import type { NodeFacts } from './env.js';
import { CsiNodeClient } from './csi-volumes.js';
import { CsiRegistration } from './csi-registration.js';
import { EventRecorder } from './events.js';
import { attachExec, type ExecLookup } from './exec-server.js';
import { KubeletApi, errorMessage } from './kube-api.js';
import { kubeletDir, pidsDir, podDir, podsDir, sharedDirFor, type NodeLayout } from './layout.js';
import { startLogServer, type LogTarget } from './log-server.js';
import { makeSharedMount, mountsUnder, unmount, unmountAllUnder } from './mounts.js';
import { NODE_CAPACITY, NodeHeartbeat, nodeCapacity } from './node.js';
import { PodWorker } from './pod-worker.js';
import { groupAlive, killGroup } from './process-runtime.js';

/** Longest a pod gets to stop when the kubelet itself stops (cluster:down allows the kubelet 10 s). */
export const SHUTDOWN_GRACE_SECONDS = 5;

export interface KubeletOptions {
  kubeconfig: string;
  nodeName: string;
  nodeIp: string;
  rootDir: string;
  port: number;
  tlsCert: Buffer;
  tlsKey: Buffer;
  caPem: string;
  apiServer: ApiServerAddress;
  repoDir: string;
  log: Logger;
  backoff?: { initialMs: number; maxMs: number };
  statusIntervalMs?: number;
}

export class Kubelet {
  private readonly api: KubeletApi;
  private readonly layout: NodeLayout;
  private readonly workers = new Map<string, PodWorker>();
  private informer: ListWatch<V1Pod> | undefined;
  private heartbeat: NodeHeartbeat | undefined;
  private server: Server | undefined;
  private resync: NodeJS.Timeout | undefined;
  private stopping = false;
  private bindShim: string | undefined;
  private readonly facts: NodeFacts;
  private readonly events: EventRecorder;
  private readonly csi: CsiNodeClient;
  private csiRegistration: CsiRegistration | undefined;

  constructor(private readonly o: KubeletOptions) {
    const kc = new KubeConfig();
    kc.loadFromFile(o.kubeconfig);
    this.api = new KubeletApi(kc);
    this.layout = { rootDir: o.rootDir, sharedDir: sharedDirFor(o.rootDir) };
    const cap = nodeCapacity(o.rootDir);
    this.facts = { nodeName: o.nodeName, nodeIp: o.nodeIp, allocatableCpu: NODE_CAPACITY.cpu, allocatableMemory: cap.memory ?? '0' };
    this.events = new EventRecorder(this.api.core, o.nodeName, o.log);
    this.csi = new CsiNodeClient({ layout: this.layout, nodeName: o.nodeName, log: (line) => o.log.info(line) });
  }

  async start(): Promise<void> {
    const { log } = this.o;
    await mkdir(podsDir(this.layout), { recursive: true });
    await mkdir(pidsDir(this.layout), { recursive: true });
    await makeSharedMount(kubeletDir(this.layout));
    const shim = await ensureBindShim();
    if (shim.ok) this.bindShim = shim.path;
    else log.warn({ reason: shim.reason }, 'pods bind wildcard addresses host-wide (no bind shim)');
    this.server = await startLogServer({
      host: this.o.nodeIp,
      port: this.o.port,
      cert: this.o.tlsCert,
      key: this.o.tlsKey,
      log,
      findLog: (q) => this.findLog(q),
    });
    attachExec({ server: this.server, log, lookup: (q) => this.findExec(q) });
    const version = await this.api.config.makeApiClient(VersionApi).getCode();
    this.heartbeat = new NodeHeartbeat({
      api: this.api,
      id: { nodeName: this.o.nodeName, nodeIp: this.o.nodeIp, port: this.o.port, rootDir: this.o.rootDir, kubeletVersion: version.gitVersion },
      log,
      statusIntervalMs: this.o.statusIntervalMs,
    });
    await this.heartbeat.register();
    this.heartbeat.start();
    this.csiRegistration = new CsiRegistration({
      layout: this.layout, nodeName: this.o.nodeName, config: this.api.config, core: this.api.core, csi: this.csi,
      log: (line) => log.info(line),
    });
    this.csiRegistration.start();
    await this.watchPods();
    await this.cleanupOrphans();
    this.resync = setInterval(() => {
      for (const w of this.workers.values()) w.kick();
    }, 30_000);
    log.info({ node: this.o.nodeName, ip: this.o.nodeIp, port: this.o.port }, 'local kubelet ready');
  }

  private async watchPods(): Promise<void> {
    const fieldSelector = `spec.nodeName=${this.o.nodeName}`;
    const informer = new ListWatch<V1Pod>(
      '/api/v1/pods',
      new Watch(this.api.config),
      () => this.api.core.listPodForAllNamespaces({ fieldSelector }),
      false,
      undefined,
      fieldSelector,
    );
    informer.on('add', (pod) => this.onPod(pod));
    informer.on('update', (pod) => this.onPod(pod));
    informer.on('delete', (pod) => this.workers.get(pod.metadata?.uid ?? '')?.removedFromApi());
    informer.on('error', (err) => {
      if (this.stopping) return;
      this.o.log.warn({ err: errorMessage(err) }, 'pod watch failed; restarting');
      setTimeout(() => void informer.start().catch(() => undefined), 1000);
    });
    this.informer = informer;
    await informer.start();
  }

  private onPod(pod: V1Pod): void {
    if (this.stopping) return;
    const uid = pod.metadata?.uid;
    if (!uid) return;
    let w = this.workers.get(uid);
    if (!w) {
      w = new PodWorker(pod, {
        layout: this.layout,
        node: this.facts,
        api: this.api,
        events: this.events,
        log: this.o.log,
        repoDir: this.o.repoDir,
        apiServer: this.o.apiServer,
        clusterCaPem: this.o.caPem,
        hostPath: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        bindShim: this.bindShim,
        backoff: this.o.backoff ?? { initialMs: 1000, maxMs: 30_000 },
        csi: this.csi,
        onGone: (gone) => this.workers.delete(gone),
      });
      this.workers.set(uid, w);
    }
    w.update(pod);
  }

  private findLog(q: { namespace: string; pod: string; container: string; previous: boolean }): LogTarget {
    const pod = this.informer?.get(q.pod, q.namespace);
    const w = pod ? this.workers.get(pod.metadata?.uid ?? '') : undefined;
    if (!w) return { ok: false, status: 404, message: `pod ${q.namespace}/${q.pod} not found on node ${this.o.nodeName}` };
    const run = w.logRun(q.container, q.previous);
    if ('error' in run) return { ok: false, status: 400, message: run.error };
    return { ok: true, file: run.logFile, stillRunning: run.stillRunning };
  }

  private findExec(q: { namespace: string; pod: string; container: string; command: string[] }): ReturnType<ExecLookup> {
    const pod = this.informer?.get(q.pod, q.namespace);
    const w = pod ? this.workers.get(pod.metadata?.uid ?? '') : undefined;
    if (!w) return { ok: false, status: 404, message: `pod ${q.namespace}/${q.pod} not found on node ${this.o.nodeName}` };
    if (q.command.length === 0) return { ok: false, status: 400, message: 'you must specify at least one command for the container' };
    const found = w.execTarget(q.container, q.command);
    if ('error' in found) return { ok: false, status: 400, message: found.error };
    return { ok: true, target: found.target };
  }

  /** Pods whose directory exists but that are no longer bound here: kill leftovers, unmount, remove. */
  private async cleanupOrphans(): Promise<void> {
    const known = new Set((this.informer?.list() ?? []).map((p) => p.metadata?.uid ?? ''));
    const dirs = await readdir(podsDir(this.layout)).catch(() => [] as string[]);
    const pidFiles = await readdir(pidsDir(this.layout)).catch(() => [] as string[]);
    for (const f of pidFiles) {
      const uid = f.slice(0, f.indexOf('_'));
      if (known.has(uid)) continue;
      const file = `${pidsDir(this.layout)}/${f}`;
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (pid > 1 && groupAlive(pid)) killGroup(pid, 'SIGKILL');
      await rm(file, { force: true });
    }
    for (const uid of dirs) {
      if (known.has(uid)) continue;
      const dir = podDir(this.layout, uid);
      await unmountAllUnder(dir);
      if ((await mountsUnder(dir)).length > 0) continue;
      await rm(dir, { recursive: true, force: true });
      this.o.log.info({ uid }, 'removed directory of a pod deleted while the kubelet was down');
    }
  }

  /**
   * A simulated crash for tests of adoption: stop talking to the API and serving, forget every pod, but leave
   * their processes and mounts alone. A new Kubelet started afterwards must pick everything up again.
   */
  async abandon(): Promise<void> {
    this.stopping = true;
    if (this.resync) clearInterval(this.resync);
    this.heartbeat?.stop();
    this.csiRegistration?.stop();
    await this.informer?.stop();
    for (const w of this.workers.values()) w.abandon();
    this.workers.clear();
    await this.closeServer();
  }

  private closeServer(): Promise<void> {
    return new Promise<void>((r) => {
      if (!this.server) return r();
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }

  /** SIGTERM: stop every pod's containers within their grace periods, then release all host mounts. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.resync) clearInterval(this.resync);
    this.heartbeat?.stop();
    this.csiRegistration?.stop();
    await this.informer?.stop();
    await Promise.all([...this.workers.values()].map((w) => w.shutdown(SHUTDOWN_GRACE_SECONDS)));
    await this.closeServer();
    this.csi.close();
    await unmountAllUnder(kubeletDir(this.layout));
    // makeSharedMount's self-bind is among them; a second pass catches a lazily detached one.
    for (const m of await mountsUnder(kubeletDir(this.layout))) await unmount(m);
  }
}
