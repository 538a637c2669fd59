/**
 * Creates the PodVolumeBackups of one backup run, pod by pod (docs/fs-backup.md): picks the volumes
 * (./backup-volumes.ts), skips them all when the pod is not running or no node-agent runs on its node, ensures the
 * BackupRepository of (location, pod namespace) is Ready before the first PVB, then creates one PVB per volume.
 * Idempotent across runs of the same backup: a PVB that already exists for (backup uid, pod uid, volume) is reused,
 * so a backup run again after a server restart never makes a second one.
 */
import { Kinds, Labels, LabelValues, parsePodVolumeBackup, type Backup, type PodVolumeBackup } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { ensureBackupRepository } from '../repository/ensure.js';
import { BackupMethods, type BackupVolumeInfo } from '../../api/volume-info.js';
import { podVolumeBackupFor, podVolumeKey } from './backup-pvb.js';
import { SHARED_CLAIM_SKIPPED, SharedClaimTracker } from './backup-shared-claims.js';
import { volumeInfoFor } from './backup-tracking.js';
import type { ResourcePolicies } from '../backup/volume-policies.js';
import {
  applyVolumePolicies,
  claimNamesByVolume,
  nodeAgentNotRunningReason,
  podNotRunningReason,
  selectPodVolumes,
  wantedVolumes,
  type ClaimInfo,
  type PodLike,
  type SkippedVolume,
} from './backup-volumes.js';
import { OncePerKey } from '../../base/once-per-key.js';

export interface PodVolumeBackupCreatorOptions {
  kube: Kube;
  /** The install namespace (PVBs, node-agent pods and BackupRepositories live there). */
  namespace: string;
  backup: Backup;
  /** How long to wait for a BackupRepository to become Ready (default 5 minutes). */
  repositoryTimeoutMs?: number;
  signal?: AbortSignal;
  /** The backup's resource policies (their volume policies decide before the pods' annotations). */
  policies?: ResourcePolicies | undefined;
}

export interface PodVolumesOutcome {
  /** The PVBs of this pod (created now or found from an earlier run). */
  pvbs: PodVolumeBackup[];
  /** Volumes skipped, with Velero's reason (quiet ones are only worth an info log line). */
  skipped: SkippedVolume[];
  /** Problems that make the backup PartiallyFailed. */
  errors: string[];
  /** Volume info entries of the volumes taken. */
  volumeInfo: BackupVolumeInfo[];
  /** PV names of PVC volumes skipped, with the reason for their volume info entry. */
  pvSkips: { pvName: string; reason: string }[];
}

export class PodVolumeBackupCreator {
  private readonly pvbs;
  private existing: Map<string, PodVolumeBackup> | undefined;
  private nodesWithAgent: Set<string> | undefined;
  private readonly repositories = new OncePerKey();
  private readonly all = new Map<string, PodVolumeBackup>();
  /** Claims already taken by a PVB of this backup (a claim shared by several pods is backed up once). */
  private readonly sharedClaims = new SharedClaimTracker();

  constructor(private readonly opts: PodVolumeBackupCreatorOptions) {
    this.pvbs = customClient<PodVolumeBackup>(opts.kube, Kinds.PodVolumeBackup, parsePodVolumeBackup);
  }

  /** Every PVB of this backup run so far. */
  get podVolumeBackups(): PodVolumeBackup[] {
    return [...this.all.values()];
  }

  async backupPod(pod: PodLike, opts: { pvcsIncluded: boolean; log: Logger }): Promise<PodVolumesOutcome> {
    const out: PodVolumesOutcome = { pvbs: [], skipped: [], errors: [], volumeInfo: [], pvSkips: [] };
    const defaultVolumesToFsBackup = Boolean(this.opts.backup.spec?.defaultVolumesToFsBackup);
    const where = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
    let wanted = wantedVolumes(pod, defaultVolumesToFsBackup);
    let claims: Map<string, ClaimInfo>;
    const policies = this.opts.policies;
    if (policies?.volumePolicies.length) {
      claims = await this.claimsOf(pod, new Set((pod.spec?.volumes ?? []).map((v) => v.name)));
      const decided = applyVolumePolicies({ pod, legacyWanted: wanted, policies, claims });
      for (const [volume, verdict] of decided.verdicts) opts.log.info({ pod: where, volume, volumePolicy: verdict.policy, action: verdict.action }, 'A volume policy matched the pod volume');
      out.skipped.push(...decided.redirected);
      for (const s of decided.redirected) if (s.claim?.pv) out.pvSkips.push({ pvName: s.claim.pv.metadata.name, reason: s.reason });
      wanted = decided.wanted;
    } else {
      if (wanted.length === 0) return out;
      claims = await this.claimsOf(pod, new Set(wanted));
    }
    if (wanted.length === 0) return out;
    opts.log.info({ pod: where, volumes: wanted }, `pod ${where} has volumes to backup: ${wanted.join(',')}`);

    const selection = selectPodVolumes({ pod, defaultVolumesToFsBackup, pvcsIncluded: opts.pvcsIncluded, claims, wanted });
    out.skipped.push(...selection.skipped);
    for (const s of selection.skipped) if (s.claim?.pv) out.pvSkips.push({ pvName: s.claim.pv.metadata.name, reason: s.reason });
    if (selection.chosen.length === 0) return out;

    const skipAll = (problem: string) => {
      for (const c of selection.chosen) {
        const reason = `encountered a problem with backing up the PVC of pod ${where}: ${problem}`;
        out.skipped.push({ volume: c.volume, reason: `Skip pod volume ${c.volume}: ${problem}`, quiet: false, ...(c.claim ? { claim: c.claim } : {}) });
        if (c.claim?.pv) out.pvSkips.push({ pvName: c.claim.pv.metadata.name, reason });
      }
    };
    const notRunning = podNotRunningReason(pod);
    if (notRunning) {
      skipAll(notRunning);
      return out;
    }
    const node = pod.spec?.nodeName ?? '';
    if (!(await this.nodeAgentRunsOn(node))) {
      const reason = nodeAgentNotRunningReason(node);
      skipAll(reason);
      out.errors.push(reason);
      return out;
    }
    try {
      await this.ensureRepository(pod.metadata.namespace ?? '', opts.log);
    } catch (err) {
      const reason = (err as Error).message;
      skipAll(reason);
      out.errors.push(`error ensuring the backup repository for namespace ${pod.metadata.namespace ?? ''}: ${reason}`);
      return out;
    }

    const existing = await this.existingPodVolumeBackups();
    const podNs = pod.metadata.namespace ?? '';
    const podUid = pod.metadata.uid ?? '';
    for (const c of selection.chosen) {
      const claimName = c.claim?.pvc?.metadata.name;
      const taker = claimName ? this.sharedClaims.takenByAnother(podNs, claimName, podUid, c.volume) : undefined;
      if (taker) {
        // Only worth an info line, as in Velero: the claim's data is in the other pod's PVB.
        const reason = `${SHARED_CLAIM_SKIPPED} (volume ${c.volume} of pod ${where}, claim ${claimName ?? ''}, backed up from pod ${podNs}/${taker.podName})`;
        out.skipped.push({ volume: c.volume, reason, quiet: true });
        continue;
      }
      const wantedPvb = podVolumeBackupFor({ backup: this.opts.backup, pod, volume: c.volume, ...(c.claim ? { claim: c.claim } : {}) });
      let pvb = existing.get(podVolumeKey(wantedPvb));
      if (pvb) {
        opts.log.info({ pod: where, volume: c.volume, podVolumeBackup: pvb.metadata.name }, 'PodVolumeBackup exists from an earlier run of this backup; reusing it');
      } else {
        try {
          pvb = await this.pvbs.create(wantedPvb);
          existing.set(podVolumeKey(pvb), pvb);
          opts.log.info({ pod: where, volume: c.volume, podVolumeBackup: pvb.metadata.name }, 'Created PodVolumeBackup');
        } catch (err) {
          out.errors.push(`error creating PodVolumeBackup for volume ${c.volume} of pod ${where}: ${(err as Error).message}`);
          continue;
        }
      }
      if (claimName) this.sharedClaims.take(podNs, claimName, { podUid, podName: pod.metadata.name, volume: c.volume });
      this.all.set(podVolumeKey(pvb), pvb);
      out.pvbs.push(pvb);
      out.volumeInfo.push(volumeInfoFor(pvb, baseEntry(c.claim)));
    }
    return out;
  }

  private async claimsOf(pod: PodLike, wanted: ReadonlySet<string>): Promise<Map<string, ClaimInfo>> {
    const out = new Map<string, ClaimInfo>();
    const namespace = pod.metadata.namespace ?? '';
    for (const [volume, claimName] of claimNamesByVolume(pod)) {
      if (!wanted.has(volume)) continue;
      try {
        const pvc = await this.opts.kube.core.readNamespacedPersistentVolumeClaim({ namespace, name: claimName });
        const info: ClaimInfo = {
          pvc: {
            metadata: { name: claimName, namespace, uid: pvc.metadata?.uid ?? '', ...(pvc.metadata?.labels ? { labels: pvc.metadata.labels } : {}) },
            spec: { volumeName: pvc.spec?.volumeName ?? '' },
            ...(pvc.status?.phase ? { status: { phase: pvc.status.phase } } : {}),
          },
        };
        const pvName = pvc.spec?.volumeName;
        if (pvName) {
          const pv = await this.opts.kube.core.readPersistentVolume({ name: pvName });
          const spec = pv.spec;
          info.pv = {
            metadata: { name: pvName, ...(pv.metadata?.labels ? { labels: pv.metadata.labels } : {}) },
            // What fs-backup and the volume policies read of it.
            spec: {
              ...(spec?.hostPath ? { hostPath: spec.hostPath } : {}),
              persistentVolumeReclaimPolicy: spec?.persistentVolumeReclaimPolicy ?? '',
              ...(spec?.capacity ? { capacity: Object.fromEntries(Object.entries(spec.capacity).map(([k, v]) => [k, String(v)])) } : {}),
              ...(spec?.storageClassName ? { storageClassName: spec.storageClassName } : {}),
              ...(spec?.nfs ? { nfs: spec.nfs } : {}),
              ...(spec?.csi ? { csi: { driver: spec.csi.driver, ...(spec.csi.volumeAttributes ? { volumeAttributes: spec.csi.volumeAttributes } : {}) } } : {}),
              ...(spec?.local ? { local: spec.local } : {}),
            },
          };
        }
        out.set(volume, info);
      } catch {
        out.set(volume, {});
      }
    }
    return out;
  }

  private async nodeAgentRunsOn(node: string): Promise<boolean> {
    if (!this.nodesWithAgent) {
      const pods = await this.opts.kube.core.listNamespacedPod({ namespace: this.opts.namespace, labelSelector: `${Labels.NodeAgentRole}=${LabelValues.NodeAgent}` });
      this.nodesWithAgent = new Set(
        pods.items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp && p.spec?.nodeName).map((p) => p.spec?.nodeName ?? ''),
      );
    }
    if (this.nodesWithAgent.has(node)) return true;
    // Looked up once per run; a node-agent that started since is found by asking again.
    this.nodesWithAgent = undefined;
    const pods = await this.opts.kube.core.listNamespacedPod({ namespace: this.opts.namespace, labelSelector: `${Labels.NodeAgentRole}=${LabelValues.NodeAgent}`, fieldSelector: `spec.nodeName=${node}` });
    return pods.items.some((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  }

  /** Once per namespace; a failure is not remembered: the next pod of the namespace tries again. */
  private ensureRepository(volumeNamespace: string, log: Logger): Promise<void> {
    return this.repositories.run(volumeNamespace, () => ensureBackupRepository(this.opts, volumeNamespace, log));
  }

  private async existingPodVolumeBackups(): Promise<Map<string, PodVolumeBackup>> {
    if (!this.existing) {
      const uid = this.opts.backup.metadata.uid ?? '';
      const found = uid ? await this.pvbs.list(this.opts.namespace, `${Labels.BackupUID}=${uid}`) : [];
      this.existing = new Map(found.map((p) => [podVolumeKey(p), p]));
      this.sharedClaims.seed(found);
    }
    return this.existing;
  }
}

/** What the volume info entry of a PVC volume carries beyond the PVB: claim, volume and its reclaim policy/labels. */
function baseEntry(claim: ClaimInfo | undefined): BackupVolumeInfo | undefined {
  if (!claim?.pvc) return undefined;
  return {
    pvcName: claim.pvc.metadata.name,
    pvcNamespace: claim.pvc.metadata.namespace ?? '',
    ...(claim.pv ? { pvName: claim.pv.metadata.name } : {}),
    backupMethod: BackupMethods.PodVolumeBackup,
    snapshotDataMoved: false,
    preserveLocalSnapshot: false,
    skipped: false,
    ...(claim.pv ? { pvInfo: { reclaimPolicy: claim.pv.spec?.persistentVolumeReclaimPolicy ?? '', labels: claim.pv.metadata.labels ?? null } } : {}),
  };
}
