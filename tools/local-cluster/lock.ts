/**
 * A cross-process lock on a file, so two `setup` or `up` runs that race (two terminals, or a test run next to
 * `npm run cluster:up`) take turns instead of building or starting the same thing twice. The holder's pid is
 * written into the file; a lock whose holder died is taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isAlive } from './processes.js';

export interface LockOptions {
  path: string;
  /** How long to wait for another holder before giving up. */
  timeoutMs: number;
  /** Called once when we start waiting, so a long wait (another build running) is explained. */
  onWait?: (holderPid: number) => void;
}

export async function withFileLock<T>(opts: LockOptions, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(opts.path), { recursive: true });
  const deadline = Date.now() + opts.timeoutMs;
  let announced = false;
  for (;;) {
    if (tryAcquire(opts.path)) break;
    const holder = readHolder(opts.path);
    if (holder !== undefined && !isAlive(holder)) {
      rmSync(opts.path, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${opts.path} (held by pid ${holder ?? '?'})`);
    if (!announced && holder !== undefined) {
      opts.onWait?.(holder);
      announced = true;
    }
    await delay(500);
  }
  try {
    return await fn();
  } finally {
    rmSync(opts.path, { force: true });
  }
}

function tryAcquire(path: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function readHolder(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
