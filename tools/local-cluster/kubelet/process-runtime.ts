/**
 * Runs one container run as a host process group: `unshare --mount --propagation slave sh <launch script>`,
 * stdout+stderr appended straight to the container's log file (so the process outlives a kubelet restart), and
 * the pid recorded under `<root>/pids/` for cluster:down plus a run record for adoption by the next kubelet.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildLaunchScript, namespacePropagation, type LaunchSpec } from './launch-script.js';

export interface RunRecord {
  pid: number;
  /** Field 22 of /proc/<pid>/stat, to tell our process from a later one that reuses the pid. */
  pidStartTicks: string;
  restartCount: number;
  startedAt: string;
}

export interface ProcessExit {
  /** Exit status as a container runtime reports it: 128+signal when killed by a signal; undefined if unknown. */
  exitCode: number | undefined;
  signal?: number | undefined;
}

export interface RunningProcess {
  pid: number;
  startedAt: Date;
  exited: Promise<ProcessExit>;
  /** True once the container is set up (mounts in place) and its command starts; false if it ended first. */
  ready: Promise<boolean>;
}

export interface StartProcessOptions {
  launch: Omit<LaunchSpec, 'exitCodeFile'>;
  env: ReadonlyMap<string, string>;
  logFile: string;
  terminationLogFile: string;
  runtimeDir: string;
  pidFile: string;
  restartCount: number;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };

export function exitCodeFile(runtimeDir: string, restartCount: number): string {
  return join(runtimeDir, `${restartCount}.exit`);
}

function runRecordFile(runtimeDir: string, restartCount: number): string {
  return join(runtimeDir, `${restartCount}.json`);
}

export async function procStartTicks(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const afterComm = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the comm start at field 3 (state); starttime is field 22.
    return afterComm[22 - 3];
  } catch {
    return undefined;
  }
}

export async function startProcess(o: StartProcessOptions): Promise<RunningProcess> {
  await mkdir(o.runtimeDir, { recursive: true });
  await mkdir(dirname(o.logFile), { recursive: true });
  await mkdir(dirname(o.terminationLogFile), { recursive: true });
  await mkdir(dirname(o.pidFile), { recursive: true });
  await writeFile(o.terminationLogFile, '');
  await chmod(o.terminationLogFile, 0o666);
  const exitFile = exitCodeFile(o.runtimeDir, o.restartCount);
  const startedFile = join(o.runtimeDir, `${o.restartCount}.started`);
  await rm(exitFile, { force: true });
  await rm(startedFile, { force: true });
  const script = join(o.runtimeDir, `${o.restartCount}.sh`);
  await writeFile(script, buildLaunchScript({ ...o.launch, exitCodeFile: exitFile, startedFile }));
  const logFd = openSync(o.logFile, 'a');
  let child;
  try {
    child = spawn('unshare', ['--mount', '--propagation', namespacePropagation(o.launch.mounts), 'sh', script], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: Object.fromEntries(o.env),
    });
  } finally {
    closeSync(logFd);
  }
  const pid = child.pid;
  const startedAt = new Date();
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('error', () => resolve({ exitCode: 128 }));
    child.once('exit', (code, signal) => {
      const n = SIGNAL_NUMBERS[signal ?? ''] ?? 9;
      const result: ProcessExit = code !== null ? { exitCode: code } : { exitCode: 128 + n, signal: n };
      // Whatever the main process left behind in its group dies with it, as in a container.
      void (pid === undefined ? Promise.resolve() : reapGroup(pid)).then(() => resolve(result));
    });
  });
  const ready = waitUntilStarted(startedFile, exited);
  if (pid === undefined) return { pid: -1, startedAt, exited, ready };
  const record: RunRecord = {
    pid,
    pidStartTicks: (await procStartTicks(pid)) ?? '',
    restartCount: o.restartCount,
    startedAt: startedAt.toISOString(),
  };
  await writeFile(runRecordFile(o.runtimeDir, o.restartCount), JSON.stringify(record));
  await writeFile(o.pidFile, `${pid}\n`);
  return { pid, startedAt, exited, ready };
}

/** Polls for the launch script's "set up" marker until it appears or the process ends. */
async function waitUntilStarted(startedFile: string, exited: Promise<ProcessExit>): Promise<boolean> {
  let ended = false;
  void exited.then(() => (ended = true));
  for (;;) {
    if (existsSync(startedFile)) return true;
    if (ended) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Sends a signal to a container's whole process group; a gone group is not an error. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

/** SIGKILLs a process group and waits (bounded) until none of it is left, zombies included. */
export async function reapGroup(pid: number, timeoutMs = 5000): Promise<void> {
  killGroup(pid, 'SIGKILL');
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function readRunRecord(runtimeDir: string, restartCount: number): Promise<RunRecord | undefined> {
  try {
    return JSON.parse(await readFile(runRecordFile(runtimeDir, restartCount), 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}

export async function readExitCode(runtimeDir: string, restartCount: number): Promise<number | undefined> {
  try {
    const n = Number((await readFile(exitCodeFile(runtimeDir, restartCount), 'utf8')).trim());
    return Number.isInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Re-attaches to a run started by an earlier kubelet. Undefined when that process is gone (the caller then
 * reads the exit file); otherwise its exit is found by polling, since it is not our child.
 */
export async function adoptProcess(o: { record: RunRecord; runtimeDir: string; pollMs?: number }): Promise<RunningProcess | undefined> {
  const { record } = o;
  const ticks = await procStartTicks(record.pid);
  if (ticks === undefined || ticks !== record.pidStartTicks) return undefined;
  const exited = new Promise<ProcessExit>((resolve) => {
    const timer = setInterval(() => {
      void procStartTicks(record.pid).then(async (now) => {
        if (now === record.pidStartTicks) return;
        clearInterval(timer);
        await reapGroup(record.pid);
        resolve({ exitCode: await readExitCode(o.runtimeDir, record.restartCount) });
      });
    }, o.pollMs ?? 500);
  });
  return { pid: record.pid, startedAt: new Date(record.startedAt), exited, ready: Promise.resolve(true) };
}
