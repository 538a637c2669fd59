import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireRunLock } from '../../../bench/datapath/run-lock.js';
import { tempRoots } from '../../support/temp-roots.js';

const tempDir = tempRoots('cairn-bench-lock-');

describe('benchmark run lock', () => {
  it('lets a second run start only after the first released the data dir', async () => {
    const dataDir = tempDir();
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
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'run.lock'), '2147483646\n');
    const release = await acquireRunLock({ dataDir, log: () => undefined, timeoutMs: 5000 });
    release();
  });
});
