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
