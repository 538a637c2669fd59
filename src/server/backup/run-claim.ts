/**
 * Who is running a backup right now. Two server processes can briefly overlap (a rolling update starts the new
 * pod before the old one stops), and the new one must not start a second run of a backup the old one is still
 * writing. The runner records itself and a heartbeat in annotations of the Backup; another process takes the
 * backup over only when the heartbeat is older than STALE_AFTER_MS (the runner died without saying so) or the
 * runner released it (a clean shutdown).
 */
import { hostname } from 'node:os';

export const RUNNER_ANNOTATION = 'backup.cairn.io/runner';
export const HEARTBEAT_ANNOTATION = 'backup.cairn.io/heartbeat';
export const HEARTBEAT_INTERVAL_MS = 15_000;
export const STALE_AFTER_MS = 45_000;

/** This process, as written in RUNNER_ANNOTATION. */
export function runnerIdentity(): string {
  return `${hostname()}/${process.pid}`;
}

export type ClaimState = { free: true } | { free: false; runner: string; retryInMs: number };

export function claimState(annotations: Record<string, string> | undefined, me: string, nowMs: number, staleAfterMs = STALE_AFTER_MS): ClaimState {
  const runner = annotations?.[RUNNER_ANNOTATION];
  const beat = Date.parse(annotations?.[HEARTBEAT_ANNOTATION] ?? '');
  if (!runner || runner === me || Number.isNaN(beat)) return { free: true };
  const age = nowMs - beat;
  if (age >= staleAfterMs) return { free: true };
  return { free: false, runner, retryInMs: staleAfterMs - age + 1000 };
}

export function claimAnnotations(me: string, now: Date): Record<string, string> {
  return { [RUNNER_ANNOTATION]: me, [HEARTBEAT_ANNOTATION]: now.toISOString() };
}

export function releaseClaim(annotations: Record<string, string> | undefined): void {
  if (!annotations) return;
  delete annotations[RUNNER_ANNOTATION];
  delete annotations[HEARTBEAT_ANNOTATION];
}
