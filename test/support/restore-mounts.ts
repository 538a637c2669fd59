/** Test-bed helpers for restores whose pods get a `restore-wait` init container. */
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Test-bed workaround: local containers see the host's file system, and the local kubelet creates missing mount
 * points on the host, so `/restores` keeps an empty directory for every volume name any earlier restore-wait
 * mounted. restore-helper waits for a marker in every directory under `/restores`, so a leftover name that this
 * test's pods do not have would hold them in Init forever. Empty directories nothing mounts are removed first.
 */
export function removeStaleRestoreMountPoints(): void {
  const root = '/restores';
  if (!existsSync(root)) return;
  const mounted = new Set<string>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let info: string;
    try {
      info = readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
    } catch {
      continue; // the process has ended
    }
    for (const line of info.split('\n')) {
      const target = line.split(' ')[4];
      if (target?.startsWith(`${root}/`)) mounted.add(target);
    }
  }
  for (const name of readdirSync(root)) {
    const dir = join(root, name);
    if (mounted.has(dir)) continue;
    try {
      rmdirSync(dir); // only ever removes an empty directory
    } catch {
      // not empty, not a directory, or just taken into use: leave it
    }
  }
}
