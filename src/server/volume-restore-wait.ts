/**
 * What waiting for a restore's PodVolumeRestores and waiting for its DataDownloads have in common: the verdict on
 * one object, its age, and the tally of verdicts into one wait state. How each kind is judged differs (a PVR also
 * waits for its pod and a node agent) and stays with the kind.
 */

export type VolumeRestoreVerdict =
  | { state: 'waiting'; why: string }
  | { state: 'completed' }
  | { state: 'failed'; error: string }
  /** Stop waiting and report `error`: the object is marked (and canceled) so the decision survives restarts. */
  | { state: 'give-up'; error: string };

export interface VolumeRestoreTally {
  completed: number;
  failed: number;
  /** True when nothing is still being waited for. */
  done: boolean;
  /** One per failed (or given-up) object. */
  errors: string[];
}

/** Milliseconds since the object was created; 0 when it has no readable creation time. */
export function ageMs(obj: { metadata?: object | undefined }, now: Date): number {
  const created = Date.parse(String((obj.metadata as { creationTimestamp?: unknown } | undefined)?.creationTimestamp ?? ''));
  return Number.isFinite(created) ? now.getTime() - created : 0;
}

/** Judges each object in order, gives up on those the verdict says (through `giveUp`), and counts the outcomes. */
export async function tallyVerdicts<T>(
  items: readonly T[],
  judge: (item: T) => VolumeRestoreVerdict | Promise<VolumeRestoreVerdict>,
  giveUp: (item: T, error: string) => Promise<void>,
): Promise<VolumeRestoreTally> {
  const tally: VolumeRestoreTally = { completed: 0, failed: 0, done: true, errors: [] };
  for (const item of items) {
    const verdict = await judge(item);
    switch (verdict.state) {
      case 'completed':
        tally.completed++;
        break;
      case 'give-up':
        await giveUp(item, verdict.error);
        tally.failed++;
        tally.errors.push(verdict.error);
        break;
      case 'failed':
        tally.failed++;
        tally.errors.push(verdict.error);
        break;
      case 'waiting':
        tally.done = false;
        break;
    }
  }
  return tally;
}
