/**
 * When a data-path run reports progress: at most once per interval (250 ms unless asked otherwise), and always when
 * forced (the end of a run). Backups and restores call it for every chunk, so it costs one clock read.
 */
export class ProgressCadence {
  private last = 0;

  constructor(
    private readonly intervalMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether to report now; a `true` answer starts the next interval. */
  due(force: boolean): boolean {
    const now = this.now();
    if (!force && now - this.last < this.intervalMs) return false;
    this.last = now;
    return true;
  }
}
