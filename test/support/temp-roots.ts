/** Fresh directories for filesystem stores in a test file, all removed when the file's tests are done. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Returns a function that makes a new empty directory named `<prefix>XXXXXX` under the OS temp dir (or with the
 * prefix it is given, to tell directories of different uses apart).
 */
export function tempRoots(prefix: string): (ownPrefix?: string) => string {
  const roots: string[] = [];
  afterAll(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });
  return (ownPrefix = prefix) => {
    const dir = mkdtempSync(join(tmpdir(), ownPrefix));
    roots.push(dir);
    return dir;
  };
}
