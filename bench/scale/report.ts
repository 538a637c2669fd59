// The bench:scale report: each step of each server side by side. Pure, so its arithmetic is unit-testable.

export interface ServerStep {
  /** Terminal phase the Backup or Restore reached. */
  phase: string;
  /** From the create call to the terminal phase. */
  seconds: number;
  /** From the create call to InProgress first seen (undefined if never seen between polls). */
  startSeconds: number | undefined;
  /** Items the step backed up or restored, as its status counts them. */
  items: number;
  /** Highest RSS of the server process while the step ran, in bytes. */
  peakRssBytes: number;
}

export interface ScaleStep {
  name: string;
  cairn: ServerStep;
  velero?: ServerStep;
}

export interface ScaleReport {
  title: string;
  steps: ScaleStep[];
  /** RSS of each server, idle, before the first step and after the last one (bytes). */
  idle: { cairn: { before: number; after: number }; velero?: { before: number; after: number } };
}

const MB = 1e6;
const pad = (s: string, n: number): string => s.padEnd(n);
const mb = (bytes: number): string => `${(bytes / MB).toFixed(0)} MB`;

function cell(s: ServerStep | undefined): string[] {
  if (!s) return ['-', '-', '-', '-'];
  const rate = s.seconds > 0 ? s.items / s.seconds : 0;
  return [`${s.seconds.toFixed(1)} s (${s.phase})`, `${rate.toFixed(0)} items/s`, s.startSeconds === undefined ? '-' : `${s.startSeconds.toFixed(2)} s`, mb(s.peakRssBytes)];
}

/** How many times faster cairn was (the peer's time over cairn's); undefined without a peer figure. */
export function speedRatio(step: ScaleStep): number | undefined {
  if (!step.velero || step.cairn.seconds <= 0) return undefined;
  return step.velero.seconds / step.cairn.seconds;
}

export function renderScaleReport(r: ScaleReport): string {
  const head = ['step', 'cairn', 'cairn rate', 'cairn start', 'cairn peak RSS', 'velero', 'velero rate', 'velero start', 'velero peak RSS', 'cairn speed vs velero'];
  const rows = r.steps.map((s) => {
    const ratio = speedRatio(s);
    return [s.name, ...cell(s.cairn), ...cell(s.velero), ratio === undefined ? '-' : `${ratio.toFixed(2)}x`];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cols: string[]): string => cols.map((c, i) => pad(c, widths[i]!)).join('  ').trimEnd();
  const out = [r.title, '', line(head), ...rows.map(line), ''];
  out.push(`idle RSS before / after the runs: cairn ${mb(r.idle.cairn.before)} / ${mb(r.idle.cairn.after)}` + (r.idle.velero ? `; velero ${mb(r.idle.velero.before)} / ${mb(r.idle.velero.after)}` : ''));
  out.push('start = from the create call to InProgress first seen (polled every 100 ms); peak RSS = the server process while the step ran');
  return out.join('\n') + '\n';
}
