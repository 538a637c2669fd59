/**
 * Host-side mounts of the kubelet (in its own mount namespace, normally the host's): the node's kubelet dir is
 * made an rshared mount so that PV binds made later under it reach containers started earlier (the node agent's
 * `/host_pods`), like mountPropagation HostToContainer on a real node.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Mount points from /proc/self/mountinfo (octal escapes decoded). */
export function parseMountPoints(mountinfo: string): string[] {
  const out: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const mp = fields[4];
    if (mp) out.push(mp.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8))));
  }
  return out;
}

export async function mountPoints(): Promise<string[]> {
  return parseMountPoints(await readFile('/proc/self/mountinfo', 'utf8'));
}

/** Mount points at or below `dir`, deepest first (the order to unmount them). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const root = resolve(dir);
  const all = await mountPoints();
  return [...new Set(all.filter((m) => m === root || m.startsWith(root + '/')))].sort((a, b) => b.length - a.length);
}

export async function isMountPoint(path: string): Promise<boolean> {
  return (await mountPoints()).includes(resolve(path));
}

export async function bindMount(source: string, target: string): Promise<void> {
  await run('mount', ['--bind', source, target]);
}

export async function unmount(target: string): Promise<void> {
  try {
    await run('umount', [target]);
  } catch {
    // Busy (a process still has it open): detach it now, the kernel finishes when it is released.
    await run('umount', ['-l', target]);
  }
}

export async function unmountAllUnder(dir: string): Promise<void> {
  for (const m of await mountsUnder(dir)) await unmount(m);
}

/** Self-bind `dir` and mark it rshared, once. */
export async function makeSharedMount(dir: string): Promise<void> {
  if (!(await isMountPoint(dir))) await run('mount', ['--bind', dir, dir]);
  await run('mount', ['--make-rshared', dir]);
}
