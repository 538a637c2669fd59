/**
 * What the restore calls right after it created a pod: work out which of its volumes have fs-backup data (from the
 * backup's PodVolumeBackups, matched by the pod's backup-time namespace and name) and create their
 * PodVolumeRestores. Counts what it started so the restore knows whether to wait.
 */
import type { PodVolumeBackup, PodVolumeRestore } from '../../api/index.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { podVolumesNotRestored, type NotRestoredVolumes } from '../restore/unrestored-volumes.js';
import type { PodVolumeRestoreCreator } from './restore-pvr.js';
import { podVolumesOf, volumesToRestore } from './restore-volumes.js';

export interface PodCreatedOptions {
  /** The pod as it is in the backup (its namespace is the backup-time one). */
  podFromBackup: UnstructuredObject;
  /** The pod as the API server returned it (name, namespace and UID of the restored pod). */
  pod: UnstructuredObject;
}

/** The restorer's view: errors to report for this pod (one line each). */
export interface PodVolumeRestoreHook {
  afterPodCreated(opts: PodCreatedOptions): Promise<string[]>;
}

export class PodVolumeRestoreStarter implements PodVolumeRestoreHook {
  readonly started: PodVolumeRestore[] = [];

  constructor(
    private readonly podVolumeBackups: readonly PodVolumeBackup[],
    private readonly creator: Pick<PodVolumeRestoreCreator, 'createForPod'>,
    /** Where volumes whose backup did not complete are recorded; and whether the restore brings pod volume data back at all. */
    private readonly unrestored?: { volumes: NotRestoredVolumes; podVolumeDataRestored: boolean },
  ) {}

  async afterPodCreated(opts: PodCreatedOptions): Promise<string[]> {
    const sourceNamespace = opts.podFromBackup.metadata.namespace ?? '';
    if (this.unrestored) {
      this.unrestored.volumes.add(
        podVolumesNotRestored({
          podVolumeBackups: this.podVolumeBackups,
          podName: opts.podFromBackup.metadata.name,
          sourceNamespace,
          targetNamespace: opts.pod.metadata.namespace ?? '',
          podVolumes: podVolumesOf(opts.pod),
          podVolumeDataRestored: this.unrestored.podVolumeDataRestored,
        }),
      );
      if (!this.unrestored.podVolumeDataRestored) return [];
    }
    const volumes = volumesToRestore({
      podVolumeBackups: this.podVolumeBackups,
      podName: opts.podFromBackup.metadata.name,
      sourceNamespace,
      podVolumes: podVolumesOf(opts.pod),
    });
    if (!volumes.length) return [];
    const uid = opts.pod.metadata.uid;
    if (!uid) return [`pod ${opts.pod.metadata.namespace ?? ''}/${opts.pod.metadata.name} has no UID; its pod volume restores were not started`];
    const result = await this.creator.createForPod({
      pod: { name: opts.pod.metadata.name, namespace: opts.pod.metadata.namespace ?? '', uid },
      sourceNamespace,
      volumes,
    });
    this.started.push(...result.podVolumeRestores);
    return result.errors;
  }
}
