/**
 * Restores a volume from whichever repository holds its snapshot: cairn's own (datapath/restorer.ts) or a Velero
 * kopia repository (datapath/kopia/restore.ts), with the same progress, cancel, result and verification.
 */
import type { Logger } from '../../base/logger.js';
import { restoreKopiaBlockSnapshot, restoreKopiaSnapshot } from '../../datapath/kopia/restore.js';
import { restore, type RestoreProgress, type RestoreResult } from '../../datapath/restorer.js';
import type { RestoreSource } from '../../storage/volume-repository.js';
import { restoreBlockVolume, type BlockProgress } from './block-volume.js';

export interface RestoreFromSourceOptions {
  snapshotId: string;
  target: string;
  signal: AbortSignal;
  onProgress: (p: RestoreProgress) => void;
  progressIntervalMs?: number;
  concurrency?: number;
  /** Leave all-zero blocks as holes (kopia repositories; cairn's own restore always does). */
  sparse?: boolean;
}

export function restoreFromSource(source: RestoreSource, opts: RestoreFromSourceOptions): Promise<RestoreResult> {
  const common = {
    snapshotId: opts.snapshotId,
    target: opts.target,
    signal: opts.signal,
    onProgress: opts.onProgress,
    ...(opts.progressIntervalMs !== undefined ? { progressIntervalMs: opts.progressIntervalMs } : {}),
    ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
  };
  if (source.kind === 'kopia') return restoreKopiaSnapshot({ repository: source.repository, ...common, ...(opts.sparse !== undefined ? { sparse: opts.sparse } : {}) });
  return restore({ repository: source.repository, ...common });
}

export function restoreBlockFromSource(
  source: RestoreSource,
  opts: { snapshotId: string; devicePath: string; signal: AbortSignal; onProgress: (p: BlockProgress) => void },
): Promise<{ bytes: number; durationMs: number }> {
  if (source.kind === 'kopia') return restoreKopiaBlockSnapshot({ repository: source.repository, ...opts });
  return restoreBlockVolume({ repository: source.repository, ...opts });
}

/** `WriteSparseFiles` (Velero's uploader setting key): holes are written unless it says `false`. */
export function writeSparseFilesSetting(settings: Record<string, string> | null | undefined): { sparse?: boolean } {
  const raw = settings?.WriteSparseFiles;
  return raw === 'false' ? { sparse: false } : {};
}

/** One log line saying which repository a restore reads (and, for Velero's, which password opened it). */
export function logRestoreSource(logger: Logger, fields: Record<string, string>, source: RestoreSource): void {
  logger.info(
    { ...fields, repository: source.location, ...(source.kind === 'kopia' ? { repositoryFormat: 'velero-kopia', passwordFrom: source.passwordSource === 'secret' ? 'from Secret velero-repo-credentials' : "Velero's default" } : {}) },
    'repository opened',
  );
}

/**
 * Restores a snapshot into a mounted directory (a pod volume or a Filesystem data-mover volume): each path that could
 * not be restored is logged and fails the restore; otherwise the figures are logged and the final progress reported.
 * Returns the bytes restored.
 */
export async function restoreDirectory(
  source: RestoreSource,
  opts: {
    snapshotId: string;
    volumePath: string;
    signal: AbortSignal;
    onProgress: (p: { totalBytes: number; doneBytes: number }) => void;
    concurrency?: number;
    sparse?: boolean;
    logger: Logger;
    who: Record<string, string>;
  },
): Promise<number> {
  const { logger, who } = opts;
  const result = await restoreFromSource(source, {
    snapshotId: opts.snapshotId,
    target: opts.volumePath,
    signal: opts.signal,
    onProgress: (p) => opts.onProgress({ totalBytes: p.totalBytes, doneBytes: p.doneBytes }),
    progressIntervalMs: 1000,
    ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
    ...(opts.sparse !== undefined ? { sparse: opts.sparse } : {}),
  });
  for (const e of result.errors) logger.warn({ ...who, path: e.path }, `not restored: ${e.reason}`);
  if (result.errors.length > 0) {
    const first = result.errors[0]!;
    throw new Error(`${result.errors.length} path(s) could not be restored, first ${first.path}: ${first.reason}`);
  }
  const s = result.stats;
  logger.info({ ...who, bytes: s.bytes, files: s.files, durationMs: s.durationMs }, 'snapshot restored');
  opts.onProgress({ totalBytes: s.bytes, doneBytes: s.bytes });
  return s.bytes;
}
