/**
 * A directory-backed dynamic provisioner for the test bed: creates the default StorageClass, a `local` PV per
 * claim of a class it owns (on the node the scheduler selected), and deletes released PVs and their data when
 * the reclaim policy is Delete. The PV binder in kube-controller-manager does the binding.
 */
import { chmod, mkdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  ListWatch,
  StorageV1Api,
  Watch,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { errorMessage } from '../kubelet/kube-api.js';
import {
  buildPv,
  defaultStorageClass,
  NODE_ROOT_ANNOTATION,
  nodeRoot,
  PROVISIONED_BY_ANNOTATION,
  PROVISIONER_NAME,
  provisionTarget,
  pvNameFor,
  pvPath,
  STORAGE_CLASS_NAME,
} from './pv-spec.js';

const code = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

export interface ProvisionerOptions {
  kubeconfig: string;
  runDir: string;
  log: Logger;
}

export class Provisioner {
  private readonly core: CoreV1Api;
  private readonly storage: StorageV1Api;
  private readonly config: KubeConfig;
  private readonly inFlight = new Set<string>();
  private readonly queued = new Map<string, { fn: () => Promise<void>; retry: () => void }>();
  private readonly informers: ListWatch<V1PersistentVolumeClaim | V1PersistentVolume>[] = [];
  private stopped = false;

  constructor(private readonly o: ProvisionerOptions) {
    this.config = new KubeConfig();
    this.config.loadFromFile(o.kubeconfig);
    this.core = this.config.makeApiClient(CoreV1Api);
    this.storage = this.config.makeApiClient(StorageV1Api);
  }

  async start(): Promise<void> {
    await this.ensureStorageClass();
    const claims = new ListWatch<V1PersistentVolumeClaim>(
      '/api/v1/persistentvolumeclaims',
      new Watch(this.config),
      () => this.core.listPersistentVolumeClaimForAllNamespaces(),
      false,
    );
    claims.on('add', (c) => this.onClaim(c));
    claims.on('update', (c) => this.onClaim(c));
    const volumes = new ListWatch<V1PersistentVolume>('/api/v1/persistentvolumes', new Watch(this.config), () => this.core.listPersistentVolume(), false);
    volumes.on('add', (v) => this.onVolume(v));
    volumes.on('update', (v) => this.onVolume(v));
    for (const inf of [claims, volumes] as ListWatch<V1PersistentVolumeClaim | V1PersistentVolume>[]) {
      inf.on('error', (err) => {
        if (this.stopped) return;
        this.o.log.warn({ err: errorMessage(err) }, 'watch failed; restarting');
        setTimeout(() => void inf.start().catch(() => undefined), 1000);
      });
      this.informers.push(inf);
      await inf.start();
    }
    this.o.log.info({ storageClass: STORAGE_CLASS_NAME }, 'provisioner ready');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const inf of this.informers) await inf.stop();
  }

  private async ensureStorageClass(): Promise<void> {
    const sc = defaultStorageClass();
    try {
      await this.storage.createStorageClass({ body: sc });
      this.o.log.info({ name: STORAGE_CLASS_NAME }, 'default StorageClass created');
    } catch (err) {
      if (code(err) !== 409) throw err;
    }
  }

  /**
   * Serialises work per key: while a run for `key` is going, the newest request waits and runs after it.
   * Failures are logged and retried later.
   */
  private once(key: string, fn: () => Promise<void>, retry: () => void): void {
    if (this.inFlight.has(key)) {
      this.queued.set(key, { fn, retry });
      return;
    }
    this.inFlight.add(key);
    void fn()
      .catch((err: unknown) => {
        this.o.log.warn({ key, err: errorMessage(err) }, 'provisioner step failed; retrying');
        setTimeout(retry, 2000);
      })
      .finally(() => {
        this.inFlight.delete(key);
        const next = this.queued.get(key);
        if (next) {
          this.queued.delete(key);
          this.once(key, next.fn, next.retry);
        }
      });
  }

  private onClaim(pvc: V1PersistentVolumeClaim): void {
    if (this.stopped) return;
    const key = `claim/${pvc.metadata?.namespace ?? ''}/${pvc.metadata?.name ?? ''}`;
    this.once(key, () => this.provision(pvc), () => void this.refetchClaim(pvc));
  }

  private async refetchClaim(pvc: V1PersistentVolumeClaim): Promise<void> {
    const fresh = await this.core
      .readNamespacedPersistentVolumeClaim({ name: pvc.metadata?.name ?? '', namespace: pvc.metadata?.namespace ?? '' })
      .catch(() => undefined);
    if (fresh) this.onClaim(fresh);
  }

  private async provision(pvc: V1PersistentVolumeClaim): Promise<void> {
    const className = pvc.spec?.storageClassName;
    if (!className) return;
    const storageClass = await this.storage.readStorageClass({ name: className }).catch(() => undefined);
    if (storageClass?.provisioner !== PROVISIONER_NAME) return;
    const nodes = storageClass.volumeBindingMode === 'Immediate' ? await this.core.listNode() : undefined;
    const fallbackNode = nodes?.items.map((n) => n.metadata?.name ?? '').sort()[0];
    const nodeName = provisionTarget({ pvc, storageClass, fallbackNode });
    if (!nodeName) return;
    const name = pvNameFor(pvc);
    const existing = await this.core.readPersistentVolume({ name }).catch(() => undefined);
    if (existing) return;
    const node = await this.core.readNode({ name: nodeName });
    const root = nodeRoot({ runDir: this.o.runDir, nodeName, rootAnnotation: node.metadata?.annotations?.[NODE_ROOT_ANNOTATION] });
    const path = pvPath(root, name);
    await mkdir(path, { recursive: true });
    await chmod(path, 0o777);
    try {
      await this.core.createPersistentVolume({ body: buildPv({ pvc, storageClass, nodeName, path }) });
    } catch (err) {
      if (code(err) !== 409) throw err;
    }
    this.o.log.info({ pv: name, claim: `${pvc.metadata?.namespace ?? ''}/${pvc.metadata?.name ?? ''}`, node: nodeName, path }, 'volume provisioned');
  }

  private onVolume(pv: V1PersistentVolume): void {
    if (this.stopped) return;
    if (pv.metadata?.annotations?.[PROVISIONED_BY_ANNOTATION] !== PROVISIONER_NAME) return;
    if (pv.status?.phase !== 'Released' || pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    const name = pv.metadata.name ?? '';
    this.once(`pv/${name}`, () => this.deleteVolume(pv), () => this.onVolume(pv));
  }

  private async deleteVolume(pv: V1PersistentVolume): Promise<void> {
    const name = pv.metadata?.name ?? '';
    const path = pv.spec?.local?.path ?? pv.spec?.hostPath?.path;
    // Only ever remove directories this provisioner made: under the run directory, in a `pv/<name>` folder.
    if (path && resolve(path).startsWith(resolve(this.o.runDir) + '/') && resolve(path).endsWith(`/pv/${name}`)) {
      await rm(path, { recursive: true, force: true });
    }
    try {
      await this.core.deletePersistentVolume({ name });
    } catch (err) {
      if (code(err) !== 404) throw err;
    }
    this.o.log.info({ pv: name, path }, 'released volume deleted');
  }
}
