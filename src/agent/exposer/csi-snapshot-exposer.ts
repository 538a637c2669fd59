/**
 * The CSI snapshot exposer (backup side of snapshot data movement, docs/data-mover.md). For a DataUpload it makes,
 * in order and each step idempotently, so an expose interrupted anywhere resumes from what exists:
 *   1. waits (the caller retries within the prepare timeout) for the source VolumeSnapshot to be ready to use, at
 *      most the DataUpload's operationTimeout (the backup's csiSnapshotTimeout) from its acceptance, as Velero does;
 *   2. a pre-provisioned VolumeSnapshotContent with the source's snapshot handle and deletionPolicy Retain;
 *   3. a VolumeSnapshot in the install namespace bound to it;
 *   4. the backup PVC (name = DU name) restored from that VolumeSnapshot;
 *   5. the backup pod mounting it, required to run on the claiming node.
 * `cleanUp` deletes all four objects (pod, PVC, VolumeSnapshot, VolumeSnapshotContent) and tolerates their absence;
 * Retain means the real snapshot survives, for the server to delete through the source VolumeSnapshot.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { DataUpload } from '../../api/index.js';
import type { ExposeProgress } from '../controllers/data-path-controller.js';
import type { VolumeMode } from '../microservice/protocol.js';
import { backupPvcClass } from '../config.js';
import { dataMoverPod } from './data-mover-pod.js';
import { deleteOwnedPodAndPvc, ensurePod, ensurePvc, readPod, readPvc, type ExposerOptions } from './exposed-objects.js';
import { snapshotApi, type SnapshotApi } from './snapshot-api.js';
import {
  backupContentName,
  backupPvc,
  backupVolumeSnapshot,
  backupVolumeSnapshotContent,
  isOwnedBy,
  snapshotReadiness,
  snapshotWaitTimedOut,
  sourceSnapshotOf,
  type ExposeOwner,
} from './snapshot-objects.js';

export interface DataMoverExposerOptions extends ExposerOptions {
  /** The clock (tests); the snapshot-ready wait is measured with it. */
  now?: () => Date;
}

/** The exposer of one data-mover kind, as the data-path controller uses it. */
export interface DataMoverExposer<T> {
  expose(obj: T): Promise<ExposeProgress>;
  getExposed(name: string): Promise<V1Pod | undefined>;
  cleanUp(obj: T): Promise<void>;
}

export function ownerOf(obj: { kind?: string | undefined; metadata: { name?: string | undefined; uid?: string | undefined } }, kind: ExposeOwner['kind'], namespace: string): ExposeOwner {
  return { kind, name: obj.metadata.name ?? '', namespace, uid: obj.metadata.uid ?? '' };
}

export const volumeModeOf = (mode: string | undefined): VolumeMode => (mode === 'Block' ? 'Block' : 'Filesystem');

/** The data-mover pod of `owner` on the exposed PVC, built from the options. */
export function podFor(opts: DataMoverExposerOptions, owner: ExposeOwner, volumeMode: VolumeMode, claim: { readOnly?: boolean; seLinuxType?: string; pinned?: boolean } = {}): V1Pod {
  return dataMoverPod({
    ...(claim.readOnly ? { readOnlyClaim: true } : {}),
    ...(claim.seLinuxType ? { seLinuxType: claim.seLinuxType } : {}),
    ...(claim.pinned ? { pinned: true } : {}),
    kind: owner.kind,
    owner: { name: owner.name, namespace: owner.namespace, uid: owner.uid },
    claimName: owner.name,
    volumeMode,
    nodeName: opts.nodeName,
    nodeAgentPod: opts.nodeAgentPod,
    resourceTimeoutMs: opts.resourceTimeoutMs,
    logLevel: opts.logLevel,
    config: opts.config,
  });
}

/**
 * What the backup PVC needs of a source PVC deleted since its snapshot was taken, from the snapshot itself (its
 * restore size and source volume mode), or undefined when the snapshot does not say.
 */
export function sourcePvcFromSnapshot(du: DataUpload, snap: { restoreSize?: string | undefined; sourceVolumeMode?: string | undefined }): V1PersistentVolumeClaim | undefined {
  if (!snap.restoreSize || !snap.sourceVolumeMode) return undefined;
  return { metadata: { name: du.spec.sourcePVC, namespace: du.spec.sourceNamespace }, spec: { volumeMode: snap.sourceVolumeMode, storageClassName: du.spec.csiSnapshot?.storageClass ?? '' } };
}

export function createCsiSnapshotExposer(opts: DataMoverExposerOptions, api: SnapshotApi = snapshotApi(opts.kube)): DataMoverExposer<DataUpload> {
  const { kube, namespace } = opts;
  const log = opts.logger.child({ exposer: 'csi-snapshot' });
  const now = opts.now ?? (() => new Date());

  /** Steps 1-3: the install-namespace VolumeSnapshot bound to a Retain copy of the source's content. */
  async function exposeSnapshot(du: DataUpload, owner: ExposeOwner): Promise<ExposeProgress & { restoreSize?: string; sourceVolumeMode?: string }> {
    const csi = du.spec.csiSnapshot;
    if (!csi?.volumeSnapshot) throw new Error('spec.csiSnapshot.volumeSnapshot is not set');
    const sourceRef = `${du.spec.sourceNamespace}/${csi.volumeSnapshot}`;
    const vs = await api.getSnapshot(du.spec.sourceNamespace, csi.volumeSnapshot);
    if (!vs) throw new Error(`volume snapshot ${sourceRef} not found`);
    const readiness = snapshotReadiness(vs);
    if ('failed' in readiness) throw new Error(readiness.failed);
    if (!readiness.ready) {
      const timedOut = snapshotWaitTimedOut({ snapshot: sourceRef, operationTimeout: du.spec.operationTimeout, acceptedTimestamp: du.status?.acceptedTimestamp ?? undefined, now: now() });
      if (timedOut) throw new Error(timedOut);
      return { ready: false, why: readiness.why };
    }
    const vsc = await api.getContent(readiness.content);
    if (!vsc) throw new Error(`volume snapshot content ${readiness.content} of ${sourceRef} not found`);
    const source = sourceSnapshotOf(vs, vsc);
    const sourceWithClass = { ...source, ...(csi.snapshotClass ? { snapshotClass: csi.snapshotClass } : {}), ...(csi.driver ? { driver: csi.driver } : {}) };
    const content = backupVolumeSnapshotContent({ owner, source: sourceWithClass, ...(vsc.spec.sourceVolumeMode ? { volumeMode: vsc.spec.sourceVolumeMode } : {}) });
    if ((await api.createContent(content)) === 'exists') {
      const existing = await api.getContent(content.metadata.name);
      if (existing && !isOwnedBy(existing.metadata, owner)) throw new Error(`volume snapshot content ${content.metadata.name} already exists and is not owned by DataUpload ${owner.name}`);
    } else log.info({ DU: owner.name, content: content.metadata.name, source: sourceRef }, 'volume snapshot content created (Retain)');
    const snapshot = backupVolumeSnapshot({ owner, source: sourceWithClass });
    if ((await api.createSnapshot(snapshot)) === 'exists') {
      const existing = await api.getSnapshot(namespace, owner.name);
      if (existing && !isOwnedBy(existing.metadata, owner)) throw new Error(`volume snapshot ${namespace}/${owner.name} already exists and is not owned by DataUpload ${owner.name}`);
    } else log.info({ DU: owner.name, snapshot: `${namespace}/${owner.name}` }, 'volume snapshot created');
    return { ready: true, ...(source.restoreSize ? { restoreSize: source.restoreSize } : {}), ...(vsc.spec.sourceVolumeMode ? { sourceVolumeMode: vsc.spec.sourceVolumeMode } : {}) };
  }

  return {
    async expose(du) {
      const owner = ownerOf(du, 'DataUpload', namespace);
      const existingPod = await readPod(kube, namespace, owner.name);
      if (existingPod && isOwnedBy(existingPod.metadata, owner)) return { ready: true };
      let pvc = await readPvc(kube, namespace, owner.name);
      // The node agent's backupPVC settings for the source volume's class (found again from the DataUpload when the
      // PVC was made before a restart).
      let custom = opts.config.backupPVC?.[du.spec.csiSnapshot?.storageClass ?? ''];
      if (!pvc || !isOwnedBy(pvc.metadata, owner)) {
        const snap = await exposeSnapshot(du, owner);
        if (!snap.ready) return snap;
        const sourceRef = `${du.spec.sourceNamespace}/${du.spec.sourcePVC}`;
        const sourcePvc = (await readPvc(kube, du.spec.sourceNamespace, du.spec.sourcePVC)) ?? sourcePvcFromSnapshot(du, snap);
        if (!sourcePvc) throw new Error(`source PVC ${sourceRef} not found, and its snapshot does not say its size and volume mode`);
        const sourceClass = du.spec.csiSnapshot?.storageClass || sourcePvc.spec?.storageClassName || '';
        custom = opts.config.backupPVC?.[sourceClass];
        const storageClass = backupPvcClass(opts.config, sourceClass);
        pvc = await ensurePvc(kube, owner, backupPvc({ owner, sourcePvc, storageClass, restoreSize: snap.restoreSize, readOnly: custom?.readOnly === true, annotations: custom?.annotations }));
        log.info({ DU: owner.name, pvc: `${namespace}/${owner.name}`, storageClass, accessModes: pvc.spec?.accessModes, volumeMode: pvc.spec?.volumeMode, size: pvc.spec?.resources?.requests?.storage }, 'backup PVC created');
      }
      // Read from the PVC as made (a restart may find it made by an earlier instance under the same settings).
      const readOnly = pvc.spec?.accessModes?.includes('ReadOnlyMany') === true;
      const spc = readOnly && custom?.spcNoRelabeling === true;
      await ensurePod(kube, owner, podFor(opts, owner, volumeModeOf(pvc.spec?.volumeMode), { readOnly, ...(spc ? { seLinuxType: 'spc_t' } : {}) }));
      log.info({ DU: owner.name, pod: `${namespace}/${owner.name}`, node: opts.nodeName }, 'backup pod created');
      return { ready: true };
    },
    getExposed: (name) => readPod(kube, namespace, name),
    async cleanUp(du) {
      const owner = ownerOf(du, 'DataUpload', namespace);
      await deleteOwnedPodAndPvc(kube, owner);
      const vs = await api.getSnapshot(namespace, owner.name);
      if (vs && isOwnedBy(vs.metadata, owner)) await api.deleteSnapshot(namespace, owner.name);
      const contentName = backupContentName(owner);
      const vsc = await api.getContent(contentName);
      if (vsc && isOwnedBy(vsc.metadata, owner)) await api.deleteContent(contentName);
      log.debug({ DU: owner.name }, 'exposed objects deleted');
    },
  };
}
