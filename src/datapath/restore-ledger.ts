/**
 * The bookkeeping every restore of files keeps, whatever the repository format: counts, progress reported at a
 * throttled cadence, per-path issues, the one failure that stops the whole restore (a full or read-only target), and
 * restoring a file's owner, mode and times with each failure reported against its path. cairn's own restorer and the
 * kopia reader share it, so both report the same way.
 */
import { chmodSync, mkdirSync, fchmodSync, fchownSync, futimesSync, lchownSync, lutimesSync, utimesSync } from 'node:fs';
import { RepositoryError } from './errors.js';
import { ProgressCadence } from './progress-cadence.js';
import { errnoReason } from './restore-writes.js';

export interface RestoreProgress {
  totalBytes: number;
  doneBytes: number;
  totalFiles: number;
  doneFiles: number;
}

/** How a restore runs, whatever the repository's format (cairn's own or Velero's kopia). */
export interface RestoreRunOptions {
  /** The directory restored into. */
  target: string;
  signal?: AbortSignal;
  onProgress?: (p: RestoreProgress) => void;
  progressIntervalMs?: number;
  /** Restore uid/gid (default true). Failures are reported. */
  ownership?: boolean;
  /** Files restored at once. */
  concurrency?: number;
}

export interface RestoreIssue {
  path: string;
  reason: string;
}

export interface RestoreStats {
  files: number;
  dirs: number;
  symlinks: number;
  bytes: number;
  durationMs: number;
}

export interface RestoreResult {
  snapshotId: string;
  stats: RestoreStats;
  errors: RestoreIssue[];
}

/** The restore cannot go on (disk full, read-only target). */
export class RestoreFailedError extends RepositoryError {}

/** Errors of the target as a whole: no later file could be written either. */
const FATAL_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

export interface LedgerOptions {
  signal?: AbortSignal | undefined;
  onProgress?: ((p: RestoreProgress) => void) | undefined;
  progressIntervalMs?: number | undefined;
  /** Restore uid/gid (default true). */
  ownership?: boolean | undefined;
}

/** A file's recorded owner, mode and modification time (seconds, fractional). */
export interface RecordedAttributes {
  uid: number;
  gid: number;
  mode: number;
  mtimeSeconds: number;
}

/** Where to set attributes: an open descriptor when there is one, else the path (a symlink itself when `symlink`). */
export interface AttributeTarget {
  abs: string;
  rel: string;
  fd: number | undefined;
  symlink?: boolean;
  /** The mode was already given at creation; set it again only when a chown may have cleared setuid/setgid. */
  modeIsSet?: boolean;
}

export class RestoreLedger {
  readonly stats: Omit<RestoreStats, 'durationMs'> = { files: 0, dirs: 0, symlinks: 0, bytes: 0 };
  readonly errors: RestoreIssue[] = [];
  readonly progress: RestoreProgress;
  private readonly cadence: ProgressCadence;
  private fatal: unknown;

  /** `stopsRestore` names other errors that are not one path's problem (a corrupt repository). */
  constructor(
    private readonly options: LedgerOptions,
    totals: { bytes: number; files: number },
    private readonly stopsRestore: (err: unknown) => boolean = () => false,
  ) {
    this.cadence = new ProgressCadence(options.progressIntervalMs);
    this.progress = { totalBytes: totals.bytes, doneBytes: 0, totalFiles: totals.files, doneFiles: 0 };
  }

  /** Throws the failure that stopped the restore, or the cancel. */
  check(): void {
    if (this.fatal) throw this.fatal;
    this.options.signal?.throwIfAborted();
  }

  /** Whether a failure has stopped the restore (cancel aside). */
  get stopped(): boolean {
    return this.fatal !== undefined;
  }

  /** Stops the restore with this error unless one stopped it already. */
  stop(err: unknown): void {
    this.fatal ??= err;
  }

  /** A failure at `rel`: listed against its path, or the end of the restore when the target as a whole failed. */
  report(rel: string, err: unknown): void {
    const code = (err as NodeJS.ErrnoException).code;
    if (code && FATAL_CODES.has(code)) {
      this.stop(new RestoreFailedError(`${code === 'EROFS' ? 'target is read-only' : 'no space left on the target'} while writing ${rel || '.'}; restore stopped`));
      return;
    }
    if (this.stopsRestore(err)) {
      this.stop(err);
      return;
    }
    this.errors.push({ path: rel || '.', reason: errnoReason(err) });
  }

  /**
   * Creates the directory `abs` of the restore (one already there is used as it is); a failure is reported against
   * `rel` and answered with false, so the restore goes on without that subtree.
   *
   * Synchronous: a mkdir takes ~25 µs, and the walk cannot go into the directory before it is made. Through the thread
   * pool each one cost a hand-off and a wake-up, the walk waited for it, and on 2 cores the woken pool thread took the
   * walk's core: a restore of 7,500 directories took 0.84-0.89x the time once the call was made here
   * (docs/benchmarks.md).
   */
  madeDir(abs: string, rel: string): boolean {
    try {
      mkdirSync(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        this.report(rel, err);
        return false;
      }
    }
    return true;
  }

  /** A file written whole. */
  fileDone(bytes: number): void {
    this.stats.files++;
    this.stats.bytes += bytes;
    this.progress.doneFiles++;
  }

  /** Progress to the callback at most every interval (default 250 ms), or now when forced. */
  reportProgress(force: boolean): void {
    const cb = this.options.onProgress;
    if (!cb) return;
    if (!this.cadence.due(force)) return;
    const p = this.progress;
    cb({ ...p, totalBytes: Math.max(p.totalBytes, p.doneBytes), totalFiles: Math.max(p.totalFiles, p.doneFiles) });
  }

  result(snapshotId: string, startedMs: number): RestoreResult {
    return { snapshotId, stats: { ...this.stats, durationMs: Date.now() - startedMs }, errors: this.errors };
  }

  /** Owner, then mode, then times; each failure is reported with the path. */
  setAttributes(target: AttributeTarget, recorded: RecordedAttributes): void {
    applyAttributes(target, recorded, this.options.ownership !== false, (err) => this.report(target.rel, err));
  }
}

/**
 * Sets a restored file's owner, then mode, then times; hands each failure to `fail` and goes on. A plain function,
 * so the worker threads that write whole files (the kopia reader's) set attributes exactly as the main thread does.
 */
export function applyAttributes(target: Omit<AttributeTarget, 'rel'>, recorded: RecordedAttributes, ownership: boolean, fail: (err: NodeJS.ErrnoException) => void): void {
  const { abs, fd, symlink = false, modeIsSet = false } = target;
  // New files belong to this process's uid/gid; chown only when the snapshot says otherwise.
  const wantOwner = ownership && (recorded.uid !== process.getuid?.() || recorded.gid !== process.getgid?.());
  if (wantOwner) {
    try {
      if (fd !== undefined) fchownSync(fd, recorded.uid, recorded.gid);
      else lchownSync(abs, recorded.uid, recorded.gid);
    } catch (err) {
      const reason = (err as Error).message.split(',')[0];
      fail(Object.assign(new Error(`cannot restore owner ${recorded.uid}:${recorded.gid}: ${reason}`), { code: (err as NodeJS.ErrnoException).code }));
    }
  }
  // After chown, which clears setuid/setgid bits.
  if (!symlink && !(modeIsSet && !wantOwner)) {
    try {
      if (fd !== undefined) fchmodSync(fd, recorded.mode);
      else chmodSync(abs, recorded.mode);
    } catch (err) {
      fail(err as NodeJS.ErrnoException);
    }
  }
  try {
    if (fd !== undefined) futimesSync(fd, recorded.mtimeSeconds, recorded.mtimeSeconds);
    else if (symlink) lutimesSync(abs, recorded.mtimeSeconds, recorded.mtimeSeconds);
    else utimesSync(abs, recorded.mtimeSeconds, recorded.mtimeSeconds);
  } catch (err) {
    fail(err as NodeJS.ErrnoException);
  }
}
