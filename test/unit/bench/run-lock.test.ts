import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireRunLock } from '../../../bench/datapath/run-lock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('benchmark run lock', () => {
  it('lets a second run start only after the first released the data dir', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cairn-bench-lock-'));
    dirs.push(dataDir);
    const release = await acquireRunLock({ dataDir, log: () => undefined });
    let secondHasIt = false;
    const second = acquireRunLock({ dataDir, log: () => undefined }).then((releaseSecond) => {
      secondHasIt = true;
      return releaseSecond;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(secondHasIt).toBe(false);
    release();
    const releaseSecond = await second;
    expect(secondHasIt).toBe(true);
    releaseSecond();
  });

  it('takes over a lock left by a process that no longer exists', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cairn-bench-lock-'));
    dirs.push(dataDir);
    writeFileSync(join(dataDir, 'run.lock'), '2147483646\n');
    const release = await acquireRunLock({ dataDir, log: () => undefined, timeoutMs: 5000 });
    release();
  });
});
