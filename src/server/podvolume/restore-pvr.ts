/**
 * PodVolumeRestores for a restored pod (docs/fs-backup.md): one per volume, created right after the pod
 * so the node agent on the pod's node restores the data while `restore-wait` holds the workload back. Creation is
 * idempotent: a PVR of this restore, pod UID and volume that exists already (a server restart) is reused. The
 * volume's BackupRepository (of the backup-time namespace) is ensured Ready first, as Velero does.
 */
import {
  Kinds,
  Labels,
  controllerReference,
  labelValue,
  newPodVolumeRestore,
  parsePodVolumeRestore,
  type PodVolumeRestore,
  type Restore,
} from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import type { VolumeToRestore } from './restore-volumes.js';
import { ensuredOncePerLocation } from '../repository/ensure.js';

export interface RestoredPodRef {
  name: string;
  namespace: string;
  uid: string;
}

export interface NewPodVolumeRestoreOptions {
  /** The install namespace. */
  namespace: string;
  restore: Restore;
  pod: RestoredPodRef;
  volume: VolumeToRestore;
  /** The backup's storage location here (`spec.storageLocation`): whose repository holds the data. */
  backupStorageLocation: string;
  /** The pod's namespace at backup time (the repository's volume namespace). */
  sourceNamespace: string;
  /** UID of the restored claim behind the volume, if it is a PVC volume. */
  pvcUID?: string;
}

/** Velero's `spec.uploaderSettings` keys from `restore.spec.uploaderConfig`. */
export function uploaderSettings(restore: Restore): Record<string, string> | undefined {
  const cfg = restore.spec.uploaderConfig;
  const out: Record<string, string> = {};
  if (cfg?.writeSparseFiles !== undefined && cfg.writeSparseFiles !== null) out.WriteSparseFiles = String(cfg.writeSparseFiles);
  if (cfg?.parallelFilesDownload && cfg.parallelFilesDownload > 0) out.ParallelFilesDownload = String(cfg.parallelFilesDownload);
  return Object.keys(out).length ? out : undefined;
}

export function newPodVolumeRestoreFor(opts: NewPodVolumeRestoreOptions): PodVolumeRestore {
  const { restore, pod, volume } = opts;
  const labels: Record<string, string> = {
    [Labels.RestoreName]: labelValue(restore.metadata.name ?? ''),
    [Labels.RestoreUID]: restore.metadata.uid ?? '',
    [Labels.PodUID]: pod.uid,
  };
  if (opts.pvcUID) labels[Labels.PVCUID] = opts.pvcUID;
  const settings = uploaderSettings(restore);
  return newPodVolumeRestore({
    namespace: opts.namespace,
    generateName: `${restore.metadata.name ?? 'restore'}-`,
    labels,
    ownerReferences: [controllerReference(restore)],
    spec: {
      pod: { kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      volume: volume.volume,
      backupStorageLocation: opts.backupStorageLocation,
      repoIdentifier: '',
      uploaderType: volume.uploaderType as PodVolumeRestore['spec']['uploaderType'],
      snapshotID: volume.snapshotID,
      sourceNamespace: opts.sourceNamespace,
      ...(settings ? { uploaderSettings: settings } : {}),
    },
  });
}

/** The label selector of one restored pod's PVRs. */
export function podSelector(restoreUID: string, podUID: string): string {
  return `${Labels.RestoreUID}=${restoreUID},${Labels.PodUID}=${podUID}`;
}

export interface PodVolumeRestoreCreatorOptions {
  kube: Kube;
  namespace: string;
  restore: Restore;
  log: Logger;
  /** The backup's storage location here (`spec.storageLocation`, set by sync for a backup made elsewhere). */
  backupStorageLocation: string;
  /** Ensures the repository of (location, volume namespace) is Ready; throws with the reason otherwise. */
  ensureRepository: (bsl: string, volumeNamespace: string) => Promise<void>;
}

export interface CreateForPodOptions {
  pod: RestoredPodRef;
  sourceNamespace: string;
  volumes: readonly VolumeToRestore[];
}

export interface CreateForPodResult {
  /** PVRs of this pod (created now or found). */
  podVolumeRestores: PodVolumeRestore[];
  /** One line per volume that got no PVR, with the reason. */
  errors: string[];
}

export class PodVolumeRestoreCreator {
  private readonly client;
  private readonly ensureRepository;

  constructor(private readonly opts: PodVolumeRestoreCreatorOptions) {
    this.client = customClient<PodVolumeRestore>(opts.kube, Kinds.PodVolumeRestore, parsePodVolumeRestore);
    this.ensureRepository = ensuredOncePerLocation(opts.ensureRepository);
  }


  private async pvcUID(namespace: string, claimName: string | undefined): Promise<string | undefined> {
    if (!claimName) return undefined;
    try {
      const pvc = await this.opts.kube.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace });
      return pvc.metadata?.uid;
    } catch {
      return undefined;
    }
  }

  async createForPod(opts: CreateForPodOptions): Promise<CreateForPodResult> {
    const { restore, namespace, log } = this.opts;
    const out: CreateForPodResult = { podVolumeRestores: [], errors: [] };
    if (!opts.volumes.length) return out;
    const existing = await this.client.list(namespace, podSelector(restore.metadata.uid ?? '', opts.pod.uid));
    for (const volume of opts.volumes) {
      const found = existing.find((p) => p.spec.volume === volume.volume);
      if (found) {
        out.podVolumeRestores.push(found);
        continue;
      }
      try {
        await this.ensureRepository(this.opts.backupStorageLocation, opts.sourceNamespace);
      } catch (err) {
        out.errors.push(`pod volume restore of volume ${volume.volume} of pod ${opts.pod.namespace}/${opts.pod.name} not started: ${(err as Error).message}`);
        continue;
      }
      const pvcUID = await this.pvcUID(opts.pod.namespace, volume.claimName);
      const pvr = newPodVolumeRestoreFor({ namespace, restore, pod: opts.pod, volume, backupStorageLocation: this.opts.backupStorageLocation, sourceNamespace: opts.sourceNamespace, ...(pvcUID ? { pvcUID } : {}) });
      try {
        const created = await this.client.create(pvr);
        log.info(`Created PodVolumeRestore ${created.metadata?.name ?? ''} for volume ${volume.volume} of pod ${opts.pod.namespace}/${opts.pod.name} (snapshot ${volume.snapshotID})`);
        out.podVolumeRestores.push(created);
      } catch (err) {
        out.errors.push(`could not create the pod volume restore of volume ${volume.volume} of pod ${opts.pod.namespace}/${opts.pod.name}: ${(err as Error).message}`);
      }
    }
    return out;
  }
}
