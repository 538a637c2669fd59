/**
 * Starting and stopping the cluster's long-running processes. Each one is started detached in its own process
 * group with its output appended to a log file, so it outlives `cluster:up` and can be stopped as a whole group
 * (with whatever it spawned) by `cluster:down`. A pid is only trusted together with the start time the kernel
 * recorded for it, so a recycled pid is never signalled by mistake.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** What the state file records about one process. */
export interface ProcessRecord {
  name: string;
  pid: number;
  /** Kernel start time (clock ticks since boot, /proc/<pid>/stat field 22); guards against pid reuse. */
  startTicks: number;
  logFile: string;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function startProcess(opts: StartProcessOptions): ProcessRecord {
  mkdirSync(dirname(opts.logFile), { recursive: true });
  const fd = openSync(opts.logFile, 'a');
  try {
    const child = spawn(opts.command, opts.args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    });
    if (child.pid === undefined) throw new Error(`could not start ${opts.name} (${opts.command})`);
    child.unref();
    // A failed exec is reported asynchronously; keep it from crashing the process, readiness checks report it.
    child.on('error', () => undefined);
    return { name: opts.name, pid: child.pid, startTicks: startTicks(child.pid) ?? 0, logFile: opts.logFile };
  } finally {
    closeSync(fd);
  }
}

/**
 * Start time of a live process, or undefined if there is none (zombies count as gone, and so does a thread of another
 * process: /proc/<tid> answers for thread IDs too, so a recycled pid may name a thread).
 */
export function startTicks(pid: number): number | undefined {
  try {
    if (/^Tgid:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] !== String(pid)) return undefined;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: parse after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return Number(fields[19]);
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  return startTicks(pid) !== undefined;
}

/** True when the recorded process is still the same process (not exited, pid not recycled). */
export function isRunning(rec: Pick<ProcessRecord, 'pid' | 'startTicks'>): boolean {
  const ticks = startTicks(rec.pid);
  return ticks !== undefined && (rec.startTicks === 0 || ticks === rec.startTicks);
}

export interface StopOptions {
  /** Time between SIGTERM and SIGKILL. */
  graceMs: number;
}

/**
 * SIGTERM to each process's whole group, then SIGKILL to whatever is left after the grace period. All records
 * are signalled at once so the grace periods overlap.
 */
export async function stopProcesses(records: Pick<ProcessRecord, 'pid' | 'startTicks'>[], opts: StopOptions): Promise<void> {
  const live = records.filter(isRunning);
  for (const r of live) signalGroup(r.pid, 'SIGTERM');
  const deadline = Date.now() + opts.graceMs;
  while (Date.now() < deadline && live.some(isRunning)) await delay(100);
  for (const r of live) signalGroup(r.pid, 'SIGKILL');
  const killDeadline = Date.now() + 5_000;
  while (Date.now() < killDeadline && live.some(isRunning)) await delay(50);
}

/** Signals the process group led by pid and the pid itself (it may have left its group). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}
