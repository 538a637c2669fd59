/**
 * The `node-agent server` role (one per node, from the DaemonSet): connects, reads its own pod (image, volumes, env
 * the data-mover pods inherit), its ConfigMap (concurrency, pod resources) and its Node's labels, then runs the
 * PodVolumeBackup, PodVolumeRestore, DataUpload and DataDownload controllers of its node, which share one set of
 * concurrency slots and the prepare queue. Ready only once every existing PVB/PVR/DU/DD has been reconciled once,
 * i.e. the work of a previous instance is resumed.
 */
import type { CoreV1Event, KubernetesListObject, V1Pod } from '@kubernetes/client-node';
import { Labels, LabelValues } from '../api/constants.js';
import { DataPathPhase } from '../api/schema.js';
import {
  Kinds,
  parseDataDownload,
  parseDataUpload,
  parsePodVolumeBackup,
  parsePodVolumeRestore,
  type DataDownload,
  type DataUpload,
  type PodVolumeBackup,
  type PodVolumeRestore,
} from '../api/index.js';
import type { Logger } from '../base/logger.js';
import { call, retryTransient, type Kube } from '../kube/client.js';
import { waitForApiServer } from '../kube/connect-retry.js';
import { requireResources } from '../kube/crd-presence.js';
import { allKindDefinitions } from '../api/kinds.js';
import { customClient } from '../kube/custom.js';
import { startHealthServer, startMetricsEndpoint, type HealthServer, type HttpListener } from '../kube/health.js';
import { MetricsRegistry } from '../base/metrics.js';
import { NODE_METRICS } from './metrics/definitions.js';
import { runningEffects } from './metrics/metrics-decisions.js';
import { nodeMetricsObserver } from './metrics/metrics-observer.js';
import type { DataPathKind } from './exposer/hosting-pod.js';
import type { Role } from '../kube/lifecycle.js';
import { concurrencyForNode, prepareQueueLength, readNodeAgentConfig, type NodeAgentConfig } from './config.js';
import { createDataDownloadController } from './controllers/data-download.js';
import type { DataPathController, DataPathControllerContext } from './controllers/data-path-controller.js';
import { isTerminal, phaseOf, type DataPathObject } from './controllers/data-path-decisions.js';
import { createDataUploadController } from './controllers/data-upload.js';
import { createPodVolumeBackupController } from './controllers/pod-volume-backup.js';
import { createPodVolumeRestoreController } from './controllers/pod-volume-restore.js';
import { createCsiSnapshotExposer } from './exposer/csi-snapshot-exposer.js';
import type { ExposerOptions } from './exposer/exposed-objects.js';
import { createGenericRestoreExposer } from './exposer/generic-restore-exposer.js';
import { createPodVolumeExposer } from './exposer/pod-volume-exposer.js';
import { NodeSlots } from './slots.js';
import { createHub, type Hub } from './watcher/hub.js';

export const DEFAULT_PREPARE_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_RESOURCE_TIMEOUT_MS = 10 * 60_000;
/** How long the watcher waits for the data mover's last Events once its pod has ended (Velero: 1 min). */
export const DEFAULT_EVENT_WAIT_MS = 60_000;

export interface NodeAgentOptions {
  kube: Kube;
  namespace: string;
  nodeName: string;
  logger: Logger;
  healthPort: number;
  healthHost?: string;
  /** Where /metrics is served (`--metrics-address`); absent: on the health port. */
  metricsAddress?: { host?: string; port: number } | undefined;
  /** This node-agent's pod name (env POD_NAME): the data-mover pods copy its image, volumes and env. */
  podName?: string | undefined;
  configMapName?: string | undefined;
  prepareTimeoutMs?: number;
  resourceTimeoutMs?: number;
  logLevel?: string;
  /** Where the kubelet's pods directory is mounted in this container (default /host_pods). */
  hostPodsDir?: string;
}

/** The ConfigMap's settings; a missing or unreadable one is logged and the defaults apply (as in Velero). */
async function readConfig(opts: NodeAgentOptions): Promise<NodeAgentConfig> {
  if (!opts.configMapName) return {};
  try {
    const cm = await call(opts.kube, `get ConfigMap ${opts.namespace}/${opts.configMapName}`, () =>
      opts.kube.core.readNamespacedConfigMap({ namespace: opts.namespace, name: opts.configMapName ?? '' }),
    );
    const { config, notApplied } = readNodeAgentConfig(cm.data);
    if (notApplied.length > 0) opts.logger.warn({ configMap: opts.configMapName, keys: notApplied }, 'the node-agent ConfigMap has settings cairn does not apply (docs/node-agent.md)');
    return config;
  } catch (err) {
    opts.logger.error({ configMap: opts.configMapName, err: (err as Error).message }, 'cannot use the node-agent ConfigMap; using the defaults');
    return {};
  }
}

function listOf<T>(res: { items: T[]; metadata?: { resourceVersion?: string | undefined } | undefined }): KubernetesListObject<T & object> {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: res.metadata?.resourceVersion ?? '' }, items: res.items as (T & object)[] };
}

export function createNodeAgent(opts: NodeAgentOptions): Role {
  let health: HealthServer | undefined;
  let metricsListener: HttpListener | undefined;
  const abort = new AbortController();
  const hubs: Hub<CoreV1Event | V1Pod>[] = [];
  let pvbs: DataPathController<PodVolumeBackup> | undefined;
  let pvrs: DataPathController<PodVolumeRestore> | undefined;
  let dus: DataPathController<DataUpload> | undefined;
  let dds: DataPathController<DataDownload> | undefined;
  const controllers = (): DataPathController<DataPathObject>[] => {
    const all: (DataPathController<DataPathObject> | undefined)[] = [pvbs, pvrs, dus, dds];
    return all.filter((c): c is DataPathController<DataPathObject> => c !== undefined);
  };
  const log = opts.logger;
  const ns = opts.namespace;

  return {
    async start() {
      health = await startHealthServer({ port: opts.healthPort, ...(opts.healthHost ? { host: opts.healthHost } : {}) });
      const metrics = new MetricsRegistry(NODE_METRICS, { processMetrics: true });
      metricsListener = await startMetricsEndpoint({ health, metrics, address: opts.metricsAddress });
      metrics.onScrape(() => {
        const byKind = new Map<DataPathKind, DataPathObject[]>();
        for (const [kind, c] of [['PodVolumeBackup', pvbs], ['PodVolumeRestore', pvrs], ['DataUpload', dus], ['DataDownload', dds]] as const) {
          if (c) byKind.set(kind, c.cached());
        }
        metrics.apply(runningEffects(opts.nodeName, byKind));
      });
      const apiVersion = await waitForApiServer(opts.kube, { logger: log, signal: abort.signal });
      // Every velero.io kind: a missing CRD would otherwise leave a controller retrying its list forever.
      await requireResources(opts.kube, 'the node agent', allKindDefinitions);
      log.info({ apiServer: opts.kube.server, apiVersion, node: opts.nodeName, namespace: ns }, 'connected to the API server');
      if (!opts.podName) throw new Error('POD_NAME is not set: the node-agent needs its own pod name (downward API metadata.name)');
      const nodeAgentPod = await call(opts.kube, `get own pod ${ns}/${opts.podName}`, () => opts.kube.core.readNamespacedPod({ namespace: ns, name: opts.podName ?? '' }));
      const config = await readConfig(opts);
      const node = await call(opts.kube, `get node ${opts.nodeName}`, () => opts.kube.core.readNode({ name: opts.nodeName }));
      const limit = concurrencyForNode(config, node.metadata?.labels);
      const queueLength = prepareQueueLength(config);
      const ignoreDelayBinding = config.restorePVC?.ignoreDelayBinding === true;
      log.info({ concurrency: limit, prepareQueueLength: queueLength, loadAffinity: config.loadAffinity ?? null, ignoreDelayBinding, configMap: opts.configMapName ?? null }, 'data path limits');

      const enqueueOwner = (pod: V1Pod) => {
        const labels = pod.metadata?.labels ?? {};
        const owners: [string | undefined, DataPathController<DataPathObject> | undefined][] = [
          [labels[Labels.PodVolumeBackup], pvbs],
          [labels[Labels.PodVolumeRestore], pvrs],
          [labels[Labels.DataUpload], dus],
          [labels[Labels.DataDownload], dds],
        ];
        for (const [name, c] of owners) if (name) c?.enqueue({ namespace: ns, name });
      };
      const events = createHub<CoreV1Event>({
        kube: opts.kube,
        path: `/api/v1/namespaces/${ns}/events`,
        list: async () => listOf(await opts.kube.core.listNamespacedEvent({ namespace: ns })),
        keyOf: (e) => (e.involvedObject.namespace === ns ? `${e.involvedObject.kind}/${e.involvedObject.name}` : undefined),
        logger: log,
      });
      const hostingPods = createHub<V1Pod>({
        kube: opts.kube,
        path: `/api/v1/namespaces/${ns}/pods`,
        list: async () => listOf(await opts.kube.core.listNamespacedPod({ namespace: ns })),
        keyOf: (p) => p.metadata?.name,
        logger: log,
        onAny: (_type, pod) => enqueueOwner(pod),
      });
      const nodeSelector = `spec.nodeName=${opts.nodeName}`;
      const nodePods = createHub<V1Pod>({
        kube: opts.kube,
        path: '/api/v1/pods',
        list: async () => listOf(await opts.kube.core.listPodForAllNamespaces({ fieldSelector: nodeSelector })),
        fieldSelector: nodeSelector,
        keyOf: (p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`,
        logger: log,
        // A restored pod's init container starting is what lets its PVRs go: map the pod to them by its UID.
        onAny: (_type, pod) => {
          const uid = pod.metadata?.uid;
          if (!uid) return;
          for (const pvr of pvrs?.cached() ?? []) {
            if (pvr.metadata?.labels?.[Labels.PodUID] === uid) pvrs?.enqueue({ namespace: ns, name: pvr.metadata.name ?? '' });
          }
        },
      });
      hubs.push(events as Hub<CoreV1Event | V1Pod>, hostingPods as Hub<CoreV1Event | V1Pod>, nodePods as Hub<CoreV1Event | V1Pod>);
      await Promise.all(hubs.map((h) => h.start()));

      const resourceTimeoutMs = opts.resourceTimeoutMs ?? DEFAULT_RESOURCE_TIMEOUT_MS;
      const moverOptions: ExposerOptions = { kube: opts.kube, namespace: ns, nodeName: opts.nodeName, nodeAgentPod, config, resourceTimeoutMs, logLevel: opts.logLevel ?? 'info', logger: log };
      const exposer = createPodVolumeExposer({ ...moverOptions, ...(opts.hostPodsDir ? { hostPodsDir: opts.hostPodsDir } : {}) });
      const slots = new NodeSlots(limit);
      const ctx: DataPathControllerContext = {
        kube: opts.kube,
        namespace: ns,
        nodeName: opts.nodeName,
        logger: log,
        events,
        hostingPods,
        slots,
        exposeOnGoing: () => controllers().reduce((n, c) => n + c.cached().filter((o) => o.metadata?.labels?.[Labels.ExposeOnGoing] === LabelValues.True).length, 0),
        prepareQueueLength: queueLength,
        prepareTimeoutMs: opts.prepareTimeoutMs ?? DEFAULT_PREPARE_TIMEOUT_MS,
        ...(config.loadAffinity ? { loadAffinity: config.loadAffinity } : {}),
        ...(node.metadata?.labels ? { nodeLabels: node.metadata.labels } : {}),
        eventWaitMs: DEFAULT_EVENT_WAIT_MS,
        progressWriteIntervalMs: 1000,
        observe: nodeMetricsObserver({ metrics, node: opts.nodeName, logger: log }),
      };
      pvbs = createPodVolumeBackupController({ ...ctx, exposer });
      pvrs = createPodVolumeRestoreController({
        ...ctx,
        exposer,
        nodePod: (namespace, name) => nodePods.cached(`${namespace}/${name}`)[0],
      });
      dus = createDataUploadController({ ...ctx, exposer: createCsiSnapshotExposer(moverOptions), ...(config.backupPVC ? { backupPVC: config.backupPVC } : {}) });
      dds = createDataDownloadController({ ...ctx, exposer: createGenericRestoreExposer(moverOptions), ignoreDelayBinding });
      // Work this node already holds (a previous instance's) counts against the limit before anything new is taken.
      // Right after install the API server may still answer 503 "storage is (re)initializing" for the new CRDs: that
      // is waited out here rather than ending the process (which cost every install a restart or two).
      const active = (o: DataPathObject) => !isTerminal(o) && phaseOf(o) !== DataPathPhase.New;
      for (const o of await retryTransient(() => customClient(opts.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup).list(ns))) {
        if (o.spec.node === opts.nodeName && active(o)) slots.hold(`PVB/${o.metadata?.name ?? ''}`);
      }
      for (const o of await retryTransient(() => customClient(opts.kube, Kinds.PodVolumeRestore, parsePodVolumeRestore).list(ns))) {
        if (o.status?.node === opts.nodeName && active(o)) slots.hold(`PVR/${o.metadata?.name ?? ''}`);
      }
      for (const o of await retryTransient(() => customClient(opts.kube, Kinds.DataUpload, parseDataUpload).list(ns))) {
        if (o.status?.node === opts.nodeName && active(o)) slots.hold(`DU/${o.metadata?.name ?? ''}`);
      }
      for (const o of await retryTransient(() => customClient(opts.kube, Kinds.DataDownload, parseDataDownload).list(ns))) {
        if (o.status?.node === opts.nodeName && active(o)) slots.hold(`DD/${o.metadata?.name ?? ''}`);
      }
      for (const c of controllers()) await c.start();
      await Promise.all(controllers().map((c) => c.idle()));
      log.info({ resumed: slots.inUse }, 'node-agent controllers running');
      health.setReady(true);
    },
    async stop() {
      abort.abort(new Error('node-agent stopping'));
      health?.setReady(false);
      for (const c of controllers()) await c.stop();
      await Promise.all(hubs.map((h) => h.stop().catch(() => undefined)));
      await metricsListener?.close();
      await health?.close();
    },
  };
}
