/**
 * A backup's exclude patterns (path.matchesGlob): a pattern with a '/' matches a path relative to the source (a
 * leading '/' anchors nothing more), one without matches a name at any depth.
 */
import { matchesGlob } from 'node:path';

export function isExcluded(excludes: readonly string[], rel: string, name: string): boolean {
  for (const p of excludes) {
    if (p.includes('/') ? matchesGlob(rel, p.replace(/^\/+/, '')) : matchesGlob(name, p)) return true;
  }
  return false;
}
