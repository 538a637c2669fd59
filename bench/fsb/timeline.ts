// When a PodVolumeBackup/PodVolumeRestore was first seen in each phase, observed from outside by polling the API
// (API timestamps have whole-second precision, too coarse for an overhead of about a second).
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CustomClient } from '../../src/kube/custom.js';

export interface Timeline {
  name: string;
  /** Milliseconds since the epoch at which each phase was first seen; `created` when the object first appeared. */
  seen: Record<string, number>;
  phase: string;
  message?: string | undefined;
}

type DataPathObject = KubernetesObject & { status?: { phase?: string; message?: string } | null };

const TERMINAL = new Set(['Completed', 'Failed', 'Canceled']);

export class TimelineWatcher<T extends DataPathObject> {
  private readonly timelines = new Map<string, Timeline>();
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly client: CustomClient<T>,
    private readonly namespace: string,
    private readonly selector: string,
    private readonly intervalMs = 100,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.poll().catch(() => undefined);
        await new Promise((r) => setTimeout(r, this.intervalMs));
      }
    })();
  }

  private async poll(): Promise<void> {
    const now = Date.now();
    for (const obj of await this.client.list(this.namespace, this.selector)) {
      const name = obj.metadata?.name ?? '';
      const t = this.timelines.get(name) ?? { name, seen: { created: now }, phase: '' };
      const phase = obj.status?.phase || 'New';
      t.phase = phase;
      t.message = obj.status?.message || undefined;
      t.seen[phase] ??= now;
      this.timelines.set(name, t);
    }
  }

  /** Resolves once `count` objects exist and all are terminal, or rejects after `timeoutMs`. */
  async waitAllTerminal(count: number, timeoutMs: number): Promise<Timeline[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const all = [...this.timelines.values()];
      if (all.length >= count && all.every((t) => TERMINAL.has(t.phase))) return all;
      if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(all.map((t) => ({ name: t.name, phase: t.phase, message: t.message })))}`);
      await new Promise((r) => setTimeout(r, this.intervalMs));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

/** Seconds between two phases of a timeline (undefined if either was never seen, e.g. a phase skipped between polls). */
export function between(t: Timeline, from: string, to: string): number | undefined {
  const a = t.seen[from];
  const b = t.seen[to];
  return a === undefined || b === undefined ? undefined : (b - a) / 1000;
}
