// Runs one command and measures it from outside: wall time from spawn to exit (start-up and key derivation
// included), CPU of the reaped process tree, peak and sampled resident memory of the tree, and optionally the CPU
// a server process (MinIO) spent meanwhile. Output lines go to a callback that may report "files done so far".
import { spawn } from 'node:child_process';
import {
  machineBusyCpuSeconds,
  memoryStatus,
  processCpuSeconds,
  processTree,
  reapedChildrenCpuSeconds,
} from './proc-stats.js';

export interface RssSample {
  /** Milliseconds since the command started. */
  tMs: number;
  /** Sum of VmRSS over the process tree. */
  rssBytes: number;
  /** Files processed so far, when the tool's progress output says so. */
  filesDone?: number;
}

export interface MeasureOptions {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Called for every output line; may return a files-done count parsed from a progress line. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => number | undefined;
  /** A server process whose CPU time during the command is reported separately. */
  serverPid?: number;
  sampleIntervalMs?: number;
  timeoutMs?: number;
}

export interface Measurement {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  wallSeconds: number;
  cpuSeconds: number;
  serverCpuSeconds?: number;
  /**
   * CPU that everything else on the machine used meanwhile (other users' work, this harness's sampling): on a
   * shared machine this is what the tool had to compete with.
   */
  othersCpuSeconds: number;
  /** The larger of the highest per-process VmHWM seen and the highest sampled tree RSS. */
  peakRssBytes: number;
  samples: RssSample[];
  stdout: string;
  /** The last lines of standard error, for error messages. */
  stderrTail: string;
}

const STDOUT_LIMIT = 8 * 1024 * 1024;
const STDERR_TAIL_LINES = 20;
const TREE_RESCAN_MS = 1000;

function lineSplitter(onLine: (line: string) => void): { push(chunk: Buffer): void; end(): void } {
  let pending = '';
  return {
    push(chunk) {
      pending += chunk.toString('utf8');
      const parts = pending.split(/\r\n|\r|\n/);
      pending = parts.pop() ?? '';
      for (const part of parts) if (part.length > 0) onLine(part);
    },
    end() {
      if (pending.length > 0) onLine(pending);
      pending = '';
    },
  };
}

export async function measureCommand(options: MeasureOptions): Promise<Measurement> {
  const { command, args, env, cwd, onLine, serverPid } = options;
  const sampleIntervalMs = options.sampleIntervalMs ?? 100;
  const cpuBefore = reapedChildrenCpuSeconds();
  const serverCpuBefore = serverPid === undefined ? undefined : processCpuSeconds(serverPid);
  const machineBefore = machineBusyCpuSeconds();
  const started = process.hrtime.bigint();
  const elapsedMs = (): number => Number(process.hrtime.bigint() - started) / 1e6;
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });

  let stdout = '';
  const stderrTail: string[] = [];
  let filesDone: number | undefined;
  const handle = (stream: 'stdout' | 'stderr') => (line: string) => {
    if (stream === 'stdout' && stdout.length < STDOUT_LIMIT) stdout += `${line}\n`;
    if (stream === 'stderr') {
      stderrTail.push(line);
      if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
    }
    const parsed = onLine?.(line, stream);
    if (parsed !== undefined) filesDone = parsed;
  };
  const out = lineSplitter(handle('stdout'));
  const err = lineSplitter(handle('stderr'));
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));

  const samples: RssSample[] = [];
  const hwmByPid = new Map<number, number>();
  let tree: number[] = child.pid === undefined ? [] : [child.pid];
  let lastRescan = 0;
  const sample = (): void => {
    if (child.pid === undefined) return;
    const now = elapsedMs();
    if (now - lastRescan >= TREE_RESCAN_MS) {
      tree = processTree(child.pid);
      lastRescan = now;
    }
    let rss = 0;
    for (const pid of tree) {
      const status = memoryStatus(pid);
      if (!status) continue;
      rss += status.rssBytes;
      hwmByPid.set(pid, Math.max(hwmByPid.get(pid) ?? 0, status.hwmBytes));
    }
    if (rss > 0) samples.push({ tMs: Math.round(now), rssBytes: rss, ...(filesDone === undefined ? {} : { filesDone }) });
  };
  const timer = setInterval(sample, sampleIntervalMs);
  // One early sample catches short commands (an unchanged re-run may take well under a second).
  setTimeout(sample, 20).unref();
  const killer =
    options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);

  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, sig) => resolve([code, sig]));
  });
  const wallSeconds = elapsedMs() / 1000;
  clearInterval(timer);
  if (killer) clearTimeout(killer);
  out.end();
  err.end();
  const machineBusy = machineBusyCpuSeconds() - machineBefore;
  const serverCpuAfter = serverPid === undefined ? undefined : processCpuSeconds(serverPid);
  const peakSampled = samples.reduce((max, s) => Math.max(max, s.rssBytes), 0);
  const peakHwm = Math.max(0, ...hwmByPid.values());
  const cpuSeconds = reapedChildrenCpuSeconds() - cpuBefore;
  const serverCpuSeconds =
    serverCpuBefore !== undefined && serverCpuAfter !== undefined ? serverCpuAfter - serverCpuBefore : undefined;
  return {
    exitCode,
    signal,
    wallSeconds,
    cpuSeconds,
    othersCpuSeconds: Math.max(0, machineBusy - cpuSeconds - (serverCpuSeconds ?? 0)),
    ...(serverCpuBefore !== undefined && serverCpuAfter !== undefined
      ? { serverCpuSeconds: serverCpuAfter - serverCpuBefore }
      : {}),
    peakRssBytes: Math.max(peakSampled, peakHwm),
    samples,
    stdout,
    stderrTail: stderrTail.join('\n'),
  };
}
