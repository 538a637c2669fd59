/**
 * The wire protocol between the in-pod data mover and the node-agent's watcher (docs/microservice.md):
 * Event reasons and messages, the result JSON shared by the Completed event and the termination message, and the
 * progress JSON. The strings are Velero's, so a Velero node-agent and cairn's read each other's pods alike.
 */

export const EventReasons = {
  Started: 'Data-Path-Started',
  Progress: 'Data-Path-Progress',
  Completed: 'Data-Path-Completed',
  Failed: 'Data-Path-Failed',
  Canceled: 'Data-Path-Canceled',
  Canceling: 'Data-Path-Canceling',
  Stopped: 'Data-Path-Stopped',
} as const;
export type EventReason = (typeof EventReasons)[keyof typeof EventReasons];

/**
 * What the data mover works on: a PodVolumeBackup ("PVB"), a PodVolumeRestore ("PVR"), a DataUpload ("DU") or a
 * DataDownload ("DD"). The short form is the log field; messages name the kind as Velero's do (see below).
 */
export type TaskKind = 'PVB' | 'PVR' | 'DU' | 'DD';

/** How Velero's Event messages name the kind: `PVB <name>` for fs-backup, `data upload <name>` for the data mover. */
export function eventNoun(kind: TaskKind): string {
  return kind === 'DU' ? 'data upload' : kind === 'DD' ? 'data download' : kind;
}

/** How Velero's termination messages name the kind: `PVB <name>`, `DataUpload <name>`. */
export function serviceNoun(kind: TaskKind): string {
  return kind === 'DU' ? 'DataUpload' : kind === 'DD' ? 'DataDownload' : kind;
}

/** A volume is either mounted as a file system or handed over as a raw block device. */
export type VolumeMode = 'Filesystem' | 'Block';
export const VolumeModes: readonly VolumeMode[] = ['Filesystem', 'Block'];

/** The watcher treats a failed pod whose termination message ends with this as canceled (docs/microservice.md). */
export const CANCELED_SUFFIX = 'data path is canceled';

export interface AccessPoint {
  byPath: string;
  volumeMode: VolumeMode;
}

/** The BackupResult of Velero's data-mover micro services (fs-backup and snapshot data movement), plus `totalBytes` as Velero's watcher reads it. */
export interface BackupResultMessage {
  snapshotID: string;
  emptySnapshot: boolean;
  source: AccessPoint;
  totalBytes: number;
}

/**
 * What a completed backup records in its PVB or DataUpload status: the in-pod path and the snapshot ID, and for an
 * empty volume (no snapshot taken) `emptyMessage`.
 */
export function backupResultStatus(result: ResultMessage, emptyMessage: string): { path: string; snapshotID: string; message?: string } {
  const r = result as BackupResultMessage;
  return { path: r.source?.byPath ?? '', snapshotID: r.snapshotID ?? '', ...(r.emptySnapshot ? { message: emptyMessage } : {}) };
}

export interface RestoreResultMessage {
  target: AccessPoint;
  totalBytes: number;
}

export type ResultMessage = BackupResultMessage | RestoreResultMessage;

/** `{"totalBytes":N,"doneBytes":N}`; both omitted when zero, as Go's omitempty does. */
export function progressMessage(p: { totalBytes: number; doneBytes: number }): string {
  const out: { totalBytes?: number; doneBytes?: number } = {};
  if (p.totalBytes) out.totalBytes = p.totalBytes;
  if (p.doneBytes) out.doneBytes = p.doneBytes;
  return JSON.stringify(out);
}

export function backupResultMessage(r: { snapshotID: string; emptySnapshot: boolean; volumePath: string; totalBytes: number; volumeMode?: VolumeMode }): string {
  const msg: BackupResultMessage = {
    snapshotID: r.snapshotID,
    emptySnapshot: r.emptySnapshot,
    source: { byPath: r.volumePath, volumeMode: r.volumeMode ?? 'Filesystem' },
    totalBytes: r.totalBytes,
  };
  return JSON.stringify(msg);
}

export function restoreResultMessage(r: { volumePath: string; totalBytes: number; volumeMode?: VolumeMode }): string {
  const msg: RestoreResultMessage = { target: { byPath: r.volumePath, volumeMode: r.volumeMode ?? 'Filesystem' }, totalBytes: r.totalBytes };
  return JSON.stringify(msg);
}

export const messages = {
  started: (name: string) => `Data path for ${name} started`,
  stopped: (name: string) => `Data path for ${name} stopped`,
  failed: (kind: TaskKind, name: string, error: string) => `Data path for ${eventNoun(kind)} ${name} failed, error ${error}`,
  canceled: (kind: TaskKind, name: string) => `Data path for ${eventNoun(kind)} ${name} canceled`,
  canceling: (kind: TaskKind, name: string) => `Canceling for ${eventNoun(kind)} ${name}`,
  /** Termination message when the data path itself failed or was canceled (docs/microservice.md). */
  runFailed: (kind: TaskKind, name: string, error: string) => `Failed to run data path service for ${serviceNoun(kind)} ${name}: ${error}`,
  /** Termination message when the data path could not be set up (repository, volume path). */
  initFailed: (kind: TaskKind, name: string, error: string) => `Failed to init data path service for ${serviceNoun(kind)} ${name}: ${error}`,
} as const;
