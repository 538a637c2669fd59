/**
 * cairn's processes on the real nodes, read as an operator with root on a node would read them: the nodes' containers
 * are processes of this machine (a node has its own mount and PID namespaces, not its own kernel), so /proc here
 * shows their arguments, environment and what the kernel lets them do (capabilities, no_new_privs, seccomp, the
 * mounts they see). Real nodes only (the e2e tier).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface CairnProcess {
  pid: number;
  /** The arguments after `/cairn` (the image runs `node /cairn <args>`). */
  args: string[];
  /** Every argument, the interpreter's included. */
  argv: string[];
  env: Record<string, string>;
  /** Raw bytes of /proc/<pid>/cmdline and /proc/<pid>/environ, to search for what must not be there. */
  rawCmdline: string;
  rawEnviron: string;
  status: { uid: number; capEff: bigint; noNewPrivs: boolean; seccompMode: number };
  /** Whether the container's root filesystem is mounted read-only, as the process sees it. */
  readOnlyRoot: boolean;
}

/** Capability numbers (linux/capability.h) of those cairn holds. */
export const CAP = { CHOWN: 0, DAC_OVERRIDE: 1, DAC_READ_SEARCH: 2, FOWNER: 3, FSETID: 4 } as const;

export function capabilityMask(names: readonly (keyof typeof CAP)[]): bigint {
  return names.reduce((m, n) => m | (1n << BigInt(CAP[n])), 0n);
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined; // gone meanwhile, or a kernel thread
  }
}

function statusOf(text: string): CairnProcess['status'] {
  const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
  return {
    uid: Number(field('Uid').split(/\s+/)[1] ?? NaN), // the effective uid
    capEff: BigInt(`0x${field('CapEff') || '0'}`),
    noNewPrivs: field('NoNewPrivs') === '1',
    seccompMode: Number(field('Seccomp') || NaN),
  };
}

/** Mount options of the root mount ("/") in a process's mount namespace. */
function rootReadOnly(mountinfo: string): boolean {
  const root = mountinfo.split('\n').map((l) => l.split(' ')).filter((f) => f[4] === '/').at(-1);
  return (root?.[5] ?? '').split(',').includes('ro');
}

/** Every process of this machine running `/cairn` (in any container of any node). */
export function cairnProcesses(): CairnProcess[] {
  const out: CairnProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const rawCmdline = read(`/proc/${name}/cmdline`);
    if (!rawCmdline) continue;
    const argv = rawCmdline.split('\0').filter((a, i, all) => a !== '' || i < all.length - 1);
    const at = argv.indexOf('/cairn');
    if (at < 0 || at > 1) continue;
    const rawEnviron = read(`/proc/${name}/environ`) ?? '';
    const status = read(`/proc/${name}/status`);
    const mountinfo = read(`/proc/${name}/mountinfo`);
    if (status === undefined || mountinfo === undefined) continue;
    const env: Record<string, string> = {};
    for (const kv of rawEnviron.split('\0')) {
      const eq = kv.indexOf('=');
      if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    out.push({ pid: Number(name), args: argv.slice(at + 1), argv, env, rawCmdline, rawEnviron, status: statusOf(status), readOnlyRoot: rootReadOnly(mountinfo) });
  }
  return out;
}
