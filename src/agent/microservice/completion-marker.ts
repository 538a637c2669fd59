/**
 * The done marker of a pod volume restore (docs/fs-backup.md): `<volume>/.velero/<restore UID>`, an empty file
 * the `restore-wait` init container waits for. `.velero` is recreated so markers of earlier restores do not linger.
 */
import { mkdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';

export const MARKER_DIR = '.velero';

export function completionMarkerPath(volumePath: string, restoreUID: string): string {
  return join(volumePath, MARKER_DIR, restoreUID);
}

export function writeCompletionMarker(volumePath: string, restoreUID: string): void {
  const dir = join(volumePath, MARKER_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  writeFileSync(completionMarkerPath(volumePath, restoreUID), '', { mode: 0o644 });
  chmodSync(completionMarkerPath(volumePath, restoreUID), 0o644);
}
