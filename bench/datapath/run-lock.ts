// One benchmark run per data dir at a time. Two runs sharing the datasets would modify the same files, share
// scratch and MinIO dirs, and measure each other's load; a second run therefore waits for the first to finish.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

function holderPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface RunLockOptions {
  dataDir: string;
  log: (line: string) => void;
  /** Give up after this long (default: one hour). */
  timeoutMs?: number;
}

/** Takes the data dir's lock, waiting while another live run holds it; returns the release function. */
export async function acquireRunLock({ dataDir, log, timeoutMs = 3_600_000 }: RunLockOptions): Promise<() => void> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'run.lock');
  const deadline = Date.now() + timeoutMs;
  let lastNotice = 0;
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      const release = (): void => {
        if (holderPid(path) === process.pid) rmSync(path, { force: true });
      };
      process.once('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderPid(path);
    if (holder === undefined || !alive(holder)) {
      // Left by a run that died (or being written this instant: the pid is read again on the next round).
      if (holder !== undefined) rmSync(path, { force: true });
      await delay(200);
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another benchmark run (pid ${holder}) still holds ${path}`);
    if (Date.now() - lastNotice > 60_000) {
      log(`waiting for another benchmark run (pid ${holder}) using ${dataDir} to finish ...`);
      lastNotice = Date.now();
    }
    await delay(2000);
  }
}
