/**
 * A claim mounted by several pods (ReadWriteMany, or ReadWriteOnce pods on one node) holds one set of data: Velero
 * backs it up through the first pod that has it and skips it in the others (its pvcBackupTracker). This tracker
 * remembers, per backup run, which pod's PodVolumeBackup took each claim; it is seeded from the PVBs an earlier
 * run of the same backup made, so a run again after a server restart skips the same volumes.
 */
import { Annotations, type PodVolumeBackup } from '../../api/index.js';

/** Velero's info-level line for a volume whose claim another pod's PVB already takes. */
export const SHARED_CLAIM_SKIPPED = 'Pod volume uses a persistent volume claim which has already been backed up from another pod, skipping.';

export interface ClaimTaker {
  podUid: string;
  podName: string;
  volume: string;
}

export class SharedClaimTracker {
  private readonly takers = new Map<string, ClaimTaker>();

  private static key(namespace: string, claimName: string): string {
    return `${namespace}/${claimName}`;
  }

  /** Records the claims the given PVBs (of this backup) take; the first PVB per claim wins. */
  seed(pvbs: readonly PodVolumeBackup[]): void {
    for (const p of pvbs) {
      const claim = p.metadata.annotations?.[Annotations.PVCName];
      if (!claim) continue;
      this.take(p.spec.pod.namespace ?? '', claim, { podUid: p.spec.pod.uid ?? '', podName: p.spec.pod.name ?? '', volume: p.spec.volume });
    }
  }

  /** The other pod volume that already takes this claim, or undefined when this pod may (or already does). */
  takenByAnother(namespace: string, claimName: string, podUid: string, volume: string): ClaimTaker | undefined {
    const t = this.takers.get(SharedClaimTracker.key(namespace, claimName));
    if (!t || (t.podUid === podUid && t.volume === volume)) return undefined;
    return t;
  }

  /** Marks the claim as taken by this pod volume unless another one took it first. */
  take(namespace: string, claimName: string, taker: ClaimTaker): void {
    const k = SharedClaimTracker.key(namespace, claimName);
    if (!this.takers.has(k)) this.takers.set(k, taker);
  }
}
