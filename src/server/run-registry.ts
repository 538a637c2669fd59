/**
 * The backup or restore runs of this server process, by object name, each with the AbortController that stops it.
 * A controller registers a run before it claims the object (so a cancel seen meanwhile finds it) and removes it when
 * the run ends; the cancel controller aborts a run whose object asks to be canceled. A run aborted for a cancel knows
 * it (`canceled`), as opposed to a server shutdown, which leaves the work to run again.
 */
export interface Run {
  readonly signal: AbortSignal;
  /** Whether this run was stopped because its object is canceled. */
  readonly canceled: boolean;
}

export class RunRegistry {
  private readonly runs = new Map<string, { controller: AbortController; canceled: boolean }>();

  /** Registers a run; its signal aborts on `cancel(name)` or when `parent` (the server's shutdown) aborts. */
  start(name: string, parent?: AbortSignal): Run {
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

  /** Stops the run of this object for a cancel; false when this process does not run it. */
  cancel(name: string): boolean {
    const entry = this.runs.get(name);
    if (!entry) return false;
    entry.canceled = true;
    entry.controller.abort(new CanceledError(name));
    return true;
  }
}

/** Thrown out of a run stopped by a cancel. */
export class CanceledError extends Error {
  constructor(readonly object: string) {
    super(`${object} was canceled`);
  }
}
