/**
 * The backup runs of this server process, by Backup name, each with the AbortController that stops it. The backup
 * controller registers a run before it claims the Backup (so a cancel seen meanwhile finds it) and removes it when the
 * run ends; the cancel controller aborts a run whose Backup asks to be canceled. A run aborted for a cancel knows it
 * (`canceled`), as opposed to a server shutdown, which leaves the backup to run again.
 */
export interface BackupRun {
  readonly signal: AbortSignal;
  /** Whether this run was stopped because its backup is canceled. */
  readonly canceled: boolean;
}

export class RunningBackups {
  private readonly runs = new Map<string, { controller: AbortController; canceled: boolean }>();

  /** Registers a run; its signal aborts on `cancel(name)` or when `parent` (the server's shutdown) aborts. */
  start(name: string, parent?: AbortSignal): BackupRun {
    const controller = new AbortController();
    const entry = { controller, canceled: false };
    this.runs.set(name, entry);
    const signal = parent ? AbortSignal.any([parent, controller.signal]) : controller.signal;
    return {
      signal,
      get canceled() {
        return entry.canceled;
      },
    };
  }

  end(name: string): void {
    this.runs.delete(name);
  }

  has(name: string): boolean {
    return this.runs.has(name);
  }

  /** Stops the run of this backup for a cancel; false when this process does not run it. */
  cancel(name: string): boolean {
    const entry = this.runs.get(name);
    if (!entry) return false;
    entry.canceled = true;
    entry.controller.abort(new BackupCanceledError(name));
    return true;
  }
}

/** Thrown out of a run stopped by a cancel. */
export class BackupCanceledError extends Error {
  constructor(readonly backup: string) {
    super(`backup ${backup} was canceled`);
  }
}
