/**
 * Which volumes of one pod fs-backup takes (docs/fs-backup.md, as Velero's file-system backup documents it): the opt-in annotation
 * `backup.velero.io/backup-volumes`, or with `defaultVolumesToFsBackup` every volume minus
 * `backup.velero.io/backup-volumes-excludes`; then the volumes fs-backup can never take are dropped with Velero's
 * reasons. Pure: the caller fetches the pod's claims and their volumes first.
 */
import { Annotations } from '../../api/index.js';
import { matchVolumePolicy, persistentVolumeFacts, podVolumeFacts, type ClaimFacts, type PersistentVolumeFacts, type ResourcePolicies, type VolumePolicyMatch } from '../backup/volume-policies.js';

/** The parts of a Pod this decision reads. */
export interface PodLike {
  metadata: { name: string; namespace?: string; uid?: string; annotations?: Record<string, string>; deletionTimestamp?: string | null };
  spec?: {
    nodeName?: string;
    volumes?: PodVolumeLike[];
    containers?: { volumeMounts?: { name: string }[]; volumeDevices?: { name: string }[] }[];
  };
  status?: { phase?: string };
}

export interface PodVolumeLike {
  name: string;
  hostPath?: unknown;
  secret?: unknown;
  configMap?: unknown;
  projected?: unknown;
  downwardAPI?: unknown;
  persistentVolumeClaim?: { claimName?: string };
  [type: string]: unknown;
}

/** A claim a pod volume uses, with its volume when bound (undefined `pvc` = the claim could not be read). */
export interface ClaimInfo {
  pvc?: { metadata: { name: string; namespace?: string; uid?: string; labels?: Record<string, string> }; spec?: { volumeName?: string }; status?: { phase?: string } };
  pv?: { metadata: { name: string; labels?: Record<string, string> }; spec?: { hostPath?: unknown; persistentVolumeReclaimPolicy?: string } & PersistentVolumeFacts['spec'] };
}

export interface ChosenVolume {
  volume: string;
  /** Set for PVC volumes. */
  claim?: ClaimInfo;
}

export interface SkippedVolume {
  volume: string;
  /** Velero's message. */
  reason: string;
  /** Set for PVC volumes: their volume info entry says why fs-backup skipped them. */
  claim?: ClaimInfo;
  /** Skips Velero only logs at info level (volume types never backed up this way, not asked for). */
  quiet: boolean;
}

export interface VolumeSelection {
  chosen: ChosenVolume[];
  skipped: SkippedVolume[];
}

export interface SelectPodVolumesOptions {
  pod: PodLike;
  /** The backup's `spec.defaultVolumesToFsBackup` (the server default already applied). */
  defaultVolumesToFsBackup: boolean;
  /** False when the backup's filters exclude persistentvolumeclaims. */
  pvcsIncluded: boolean;
  /** Claims of the pod's PVC volumes, by volume name. */
  claims?: ReadonlyMap<string, ClaimInfo>;
  /** The volumes asked for, when volume policies decided them (default: the pod's annotations). */
  wanted?: readonly string[];
}

/** A comma-separated annotation value as a list of names. */
export function annotationList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Why a volume of this type is never backed up by fs-backup, or undefined when it may be. */
function neverBackedUp(v: PodVolumeLike, pvcsIncluded: boolean): string | undefined {
  if (v.hostPath) return 'hostPath volumes are not supported for pod volume backup';
  if (v.secret) return 'secret volumes are not backed up';
  if (v.configMap) return 'configMap volumes are not backed up';
  if (v.projected) return 'projected volumes are not backed up';
  if (v.downwardAPI) return 'downwardAPI volumes are not backed up';
  if (v.name.startsWith('default-token')) return 'service account token volumes are not backed up';
  if (v.persistentVolumeClaim && !pvcsIncluded) return 'persistentvolumeclaims are excluded from the backup';
  return undefined;
}

/** The volume names a pod asks for: opt-in annotation, or (opt-out) every volume minus the excludes annotation. */
export function wantedVolumes(pod: PodLike, defaultVolumesToFsBackup: boolean): string[] {
  const annotations = pod.metadata.annotations ?? {};
  if (!defaultVolumesToFsBackup) return [...new Set(annotationList(annotations[Annotations.BackupVolumes]))];
  const excluded = new Set(annotationList(annotations[Annotations.BackupVolumesExcludes]));
  return (pod.spec?.volumes ?? []).map((v) => v.name).filter((n) => !excluded.has(n));
}

/** The volumes of a pod fs-backup should take, and the ones it skips with the reason. */
export function selectPodVolumes(opts: SelectPodVolumesOptions): VolumeSelection {
  const { pod } = opts;
  const where = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
  const volumes = pod.spec?.volumes ?? [];
  const byName = new Map(volumes.map((v) => [v.name, v]));
  const wanted = opts.wanted ?? wantedVolumes(pod, opts.defaultVolumesToFsBackup);

  const mounted = new Set<string>();
  const devices = new Set<string>();
  for (const c of pod.spec?.containers ?? []) {
    for (const m of c.volumeMounts ?? []) mounted.add(m.name);
    for (const d of c.volumeDevices ?? []) devices.add(d.name);
  }

  const out: VolumeSelection = { chosen: [], skipped: [] };
  for (const name of wanted) {
    const v = byName.get(name);
    if (!v) {
      out.skipped.push({ volume: name, reason: `No volume named ${name} found in pod ${where}, skipping`, quiet: false });
      continue;
    }
    const never = neverBackedUp(v, opts.pvcsIncluded);
    if (never) {
      out.skipped.push({ volume: name, reason: `volume ${name} in pod ${where} is skipped: ${never}`, quiet: true });
      continue;
    }
    const claim = v.persistentVolumeClaim ? opts.claims?.get(name) : undefined;
    if (v.persistentVolumeClaim && !claim?.pvc) {
      out.skipped.push({ volume: name, reason: `error getting persistent volume claim ${v.persistentVolumeClaim.claimName ?? ''} for volume ${name} of pod ${where}`, quiet: false });
      continue;
    }
    const withClaim = claim ? { claim } : {};
    if (claim?.pv?.spec?.hostPath) {
      out.skipped.push({ volume: name, reason: `Volume ${name} in pod ${where} is a hostPath volume which is not supported for pod volume backup, skipping`, quiet: false });
      continue;
    }
    if (devices.has(name)) {
      out.skipped.push({ volume: name, reason: `volume ${name} declared in pod ${where} is a block volume. Block volumes are not supported for fs backup, skipping`, quiet: false, ...withClaim });
      continue;
    }
    if (!mounted.has(name)) {
      out.skipped.push({ volume: name, reason: `volume ${name} is declared in pod ${where} but not mounted by any container, skipping`, quiet: false, ...withClaim });
      continue;
    }
    out.chosen.push({ volume: name, ...withClaim });
  }
  return out;
}

/** Why none of a pod's volumes can be backed up now (Velero's IsPodRunning), or undefined when the pod is running. */
export function podNotRunningReason(pod: PodLike): string | undefined {
  const where = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
  if (!pod.spec?.nodeName) return `pod is not scheduled, name=${where}`;
  if (pod.status?.phase !== 'Running') return `pod is not running, name=${where}, phase=${pod.status?.phase ?? ''}`;
  if (pod.metadata.deletionTimestamp) return `pod is being terminated, name=${where}`;
  return undefined;
}

/** Velero's error when no node-agent pod runs on a pod's node. */
export function nodeAgentNotRunningReason(node: string): string {
  return `daemonset pod not found in running state in node ${node}`;
}

/** The claim names of a pod's PVC volumes, by volume name. */
export function claimNamesByVolume(pod: PodLike): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of pod.spec?.volumes ?? []) if (v.persistentVolumeClaim?.claimName) out.set(v.name, v.persistentVolumeClaim.claimName);
  return out;
}

/** What volume policies make of a pod's volumes: the ones fs-backup takes, and the ones a policy kept from it. */
export interface PolicyVolumeSelection {
  wanted: string[];
  /** Volumes the annotations asked for that a policy gave another action. */
  redirected: SkippedVolume[];
  /** The verdict per volume name, for the log. */
  verdicts: Map<string, VolumePolicyMatch>;
}

/**
 * Velero's volume helper for fs-backup: a volume a policy matches goes to fs-backup exactly when the policy's action
 * is `fs-backup` (whatever the annotations say); a volume no policy matches follows the annotations (opt-in, or
 * opt-out with defaultVolumesToFsBackup). A PVC volume is judged by its PV and claim, any other by the pod volume.
 */
export function applyVolumePolicies(opts: {
  pod: PodLike;
  legacyWanted: readonly string[];
  policies: ResourcePolicies;
  claims: ReadonlyMap<string, ClaimInfo>;
}): PolicyVolumeSelection {
  const where = `${opts.pod.metadata.namespace ?? ''}/${opts.pod.metadata.name}`;
  const out: PolicyVolumeSelection = { wanted: [], redirected: [], verdicts: new Map() };
  for (const v of opts.pod.spec?.volumes ?? []) {
    const claim = v.persistentVolumeClaim ? opts.claims.get(v.name) : undefined;
    const facts = v.persistentVolumeClaim
      ? persistentVolumeFacts(claim?.pv as PersistentVolumeFacts | undefined, claim?.pvc as ClaimFacts | undefined)
      : podVolumeFacts(v as Record<string, unknown>);
    const verdict = matchVolumePolicy(opts.policies, facts);
    if (!verdict) {
      if (opts.legacyWanted.includes(v.name)) out.wanted.push(v.name);
      continue;
    }
    out.verdicts.set(v.name, verdict);
    if (verdict.action === 'fs-backup') out.wanted.push(v.name);
    else if (opts.legacyWanted.includes(v.name)) {
      out.redirected.push({ volume: v.name, reason: `volume ${v.name} of pod ${where} is not backed up by fs-backup: ${verdict.policy} has the action ${verdict.action}`, quiet: true, ...(claim ? { claim } : {}) });
    } else if (verdict.action === 'skip' && claim?.pv) {
      // Not asked for by the annotations either: only the volume info says why.
      out.redirected.push({ volume: v.name, reason: `${verdict.policy} has the action skip`, quiet: true, claim });
    }
  }
  return out;
}
