/**
 * How many CPUs this process may really use: the cgroup CPU quota (a container's limit), not the host's core count.
 * cgroup v2: /sys/fs/cgroup/cpu.max ("max 100000" or "150000 100000"); v1: cpu.cfs_quota_us / cpu.cfs_period_us
 * (-1 = no limit). Falls back to os.availableParallelism() (which also honours the CPU affinity mask).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

function readNumberPair(path: string, split: (text: string) => [string, string]): [number, number] | undefined {
  try {
    const [a, b] = split(readFileSync(path, 'utf8').trim());
    if (a === 'max') return undefined;
    const quota = Number(a);
    const period = Number(b);
    return quota > 0 && period > 0 ? [quota, period] : undefined;
  } catch {
    return undefined;
  }
}

export function cgroupCpuLimit(root = '/sys/fs/cgroup'): number | undefined {
  const v2 = readNumberPair(`${root}/cpu.max`, (t) => t.split(/\s+/) as [string, string]);
  const v1 =
    v2 ??
    readNumberPair(`${root}/cpu/cpu.cfs_quota_us`, (t) => {
      let period = '100000';
      try {
        period = readFileSync(`${root}/cpu/cpu.cfs_period_us`, 'utf8').trim();
      } catch {
        // keep the kernel default period
      }
      return [t, period];
    });
  return v1 ? v1[0] / v1[1] : undefined;
}

/** Usable CPUs, at least 1: min(cgroup quota rounded up, available parallelism). */
export function usableCpus(root?: string): number {
  const host = availableParallelism();
  const limit = cgroupCpuLimit(root);
  return Math.max(1, limit === undefined ? host : Math.min(host, Math.ceil(limit)));
}

/**
 * Worker threads for a pipeline whose main thread is itself busy (reading, chunking, hashing, writing): one fewer
 * than the usable CPUs, at least one. Each worker costs tens of MB of memory, so there is no point in more threads
 * than cores.
 */
export function defaultWorkerCount(root?: string): number {
  return Math.max(1, usableCpus(root) - 1);
}
