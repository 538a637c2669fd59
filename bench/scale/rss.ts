// Memory of a server process as the kernel counts it (/proc/<pid>/status): sampled while a step runs, so each step
// gets its own peak, since VmHWM is one high-water mark for the process's whole life.
import { readdirSync, readFileSync } from 'node:fs';

/** Resident set size of a process in bytes, undefined once it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS every `intervalMs` until stopped; `stop()` gives the peak seen (bytes). */
export function sampleRss(pid: () => number | undefined, intervalMs = 100): { stop: () => number } {
  let peak = 0;
  const sample = (): void => {
    const p = pid();
    const rss = p === undefined ? undefined : rssBytes(p);
    if (rss !== undefined && rss > peak) peak = rss;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * The process of cairn's server installed in `namespace`: on the kubelet stand-in pods are processes of this machine,
 * found by the namespace the Deployment passes in their environment. Looked up on every call, since a restarted
 * server is a new process.
 */
export function cairnServerPid(namespace: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const program = args.findIndex((a) => a.endsWith('/run.js') || a.endsWith('/cairn') || a === 'cairn');
      if (program < 0 || args[program + 1] !== 'server') continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`CAIRN_NAMESPACE=${namespace}`)) return Number(entry);
    } catch {
      // A process that ended while being read, or one of another user.
    }
  }
  return undefined;
}
