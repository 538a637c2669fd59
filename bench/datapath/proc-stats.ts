// Reading Linux /proc for the measurements a child's exit status does not carry: the resident memory of a
// process tree over time, its peak (VmHWM), and the CPU time of reaped children.
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux/x86-64

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces); index 0 is field 3 ("state"). */
function statFields(pid: number | 'self'): string[] | undefined {
  const text = readText(`/proc/${pid}/stat`);
  if (!text) return undefined;
  return text.slice(text.lastIndexOf(')') + 2).trim().split(' ');
}

/** CPU seconds (user + system) of this process's children that have exited and been reaped. */
export function reapedChildrenCpuSeconds(): number {
  const fields = statFields('self');
  if (!fields) return 0;
  // cutime and cstime are stat fields 16 and 17.
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
}

/** CPU seconds (user + system) used so far by one live process (its own threads, not its children). */
export function processCpuSeconds(pid: number): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

export interface MemoryStatus {
  rssBytes: number;
  hwmBytes: number;
}

export function memoryStatus(pid: number): MemoryStatus | undefined {
  const text = readText(`/proc/${pid}/status`);
  if (!text) return undefined;
  const kib = (key: string): number => {
    const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : 0;
  };
  return { rssBytes: kib('VmRSS'), hwmBytes: kib('VmHWM') };
}

/** The pid and every live descendant (found through each process's parent pid). */
export function processTree(rootPid: number): number[] {
  const parentOf = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (!fields) continue;
    const ppid = Number(fields[1]);
    const siblings = parentOf.get(ppid);
    if (siblings) siblings.push(Number(name));
    else parentOf.set(ppid, [Number(name)]);
  }
  const tree: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(parentOf.get(pid) ?? []));
  }
  return tree;
}

/** CPU seconds all processors have spent busy since boot (user, nice, system, irq, softirq, steal), from /proc/stat. */
export function machineBusyCpuSeconds(): number {
  const line = readText('/proc/stat')?.split('\n')[0];
  if (!line?.startsWith('cpu ')) return 0;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / CLOCK_TICKS_PER_SECOND;
}
