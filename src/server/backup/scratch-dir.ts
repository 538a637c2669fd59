import { accessSync, constants } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * Where archives are built: $CAIRN_SCRATCH_DIR, else the server pod's `/scratch` emptyDir (install mounts it;
 * the root file system may be read-only), else the system temp directory.
 */
export function scratchDir(): string {
  const candidates = [process.env.CAIRN_SCRATCH_DIR, '/scratch'].filter((d): d is string => Boolean(d));
  for (const dir of candidates) {
    try {
      accessSync(dir, constants.W_OK);
      return dir;
    } catch {
      /* not usable: try the next */
    }
  }
  return tmpdir();
}
