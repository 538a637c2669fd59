/**
 * Layer entries for programs of this machine put into an image as they are: each binary with the shared
 * libraries `ldd` resolves for it and the dynamic loader, at the same paths as on the machine (Debian 12 here), so
 * they run in a container exactly as they do on the host. For the test bed's own images (CSI sidecars built with
 * cgo, Node.js, coreutils); never for cairn's image, which its Containerfile builds.
 */
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { promisify } from 'node:util';
import { hostFile, type LayerEntry } from './oci-layout.js';

const exec = promisify(execFile);

export interface HostBinaryOptions {
  /** Environment for `ldd` (LD_LIBRARY_PATH of an unpacked Debian prefix). */
  env?: NodeJS.ProcessEnv;
  /**
   * A folder whose files go into the image without it (an unpacked Debian prefix: its usr/lib/... becomes
   * /usr/lib/... in the image, where the dynamic loader looks).
   */
  stripPrefix?: string;
}

/** Libraries `ldd` lists for a binary (absolute paths), loader included; none for a static binary. */
export async function sharedLibraries(binary: string, env?: NodeJS.ProcessEnv): Promise<string[]> {
  let stdout: string;
  try {
    ({ stdout } = await exec('ldd', [binary], { env: env ?? process.env }));
  } catch {
    return []; // "not a dynamic executable"
  }
  const out: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) out.push(m[1]);
  }
  return out;
}

/**
 * Entries for `binaries` (host path → path in the image) and every library they need. Libraries are copied to
 * their own path and, where that is a symlink (libc.so.6 → libc-2.36.so), as the file it resolves to.
 */
export async function hostBinaryEntries(binaries: Record<string, string>, opts: HostBinaryOptions = {}): Promise<LayerEntry[]> {
  const entries: LayerEntry[] = [];
  const libs = new Set<string>();
  for (const [from, to] of Object.entries(binaries)) {
    entries.push(hostFile(to, realpathSync(from)));
    for (const lib of await sharedLibraries(from, opts.env)) libs.add(lib);
  }
  const inImage = (lib: string) =>
    (opts.stripPrefix && lib.startsWith(`${opts.stripPrefix}/`) ? lib.slice(opts.stripPrefix.length) : lib);
  for (const lib of libs) entries.push(hostFile(inImage(lib), realpathSync(lib)));
  return entries;
}
