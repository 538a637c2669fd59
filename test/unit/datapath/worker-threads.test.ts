/** Worker threads booted ahead of use (worker-threads.ts): a backup and a restore run on them exactly as on new ones. */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { restore } from '../../../src/datapath/restorer.js';
import { backup, WORKER_CHUNK_MIN } from '../../../src/datapath/uploader.js';
import { bootSpareWorkers, spareWorkerCount } from '../../../src/datapath/worker-threads.js';
import { cleanupTempDirs, describeTree, newRepo, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

describe('spare worker threads', () => {
  it('are taken by the backup and the restore, and what they store restores byte for byte', async () => {
    const src = tempDir('spares');
    writeFileSync(join(src, 'large.bin'), randomBytes(WORKER_CHUNK_MIN + 12345));
    for (let i = 0; i < 50; i++) writeFileSync(join(src, `f${i}.txt`), `line ${i}\n`.repeat(100 + i));
    const repo = await newRepo();
    bootSpareWorkers(2);
    expect(spareWorkerCount()).toBe(2);
    // One seal worker and the chunk worker.
    const onSpares = await backup({ source: src, repository: repo, workers: 1 });
    expect(spareWorkerCount()).toBe(0);
    expect(onSpares.stats.newFiles).toBe(51);

    bootSpareWorkers(2);
    const target = tempDir('spares-restore');
    const r = await restore({ repository: repo, snapshotId: onSpares.snapshotId, target, workers: 2 });
    expect(r.errors).toEqual([]);
    expect(spareWorkerCount()).toBe(0);
    expect(describeTree(target)).toEqual(describeTree(src));
  });

  it('do not keep a process alive when nothing uses them', () => {
    const module = join(import.meta.dirname, '../../../src/datapath/worker-threads.ts');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import(${JSON.stringify(module)}).then((m) => m.bootSpareWorkers(3))`], {
      encoding: 'utf8',
      // A guard against a hang, not a speed check: the process must end by itself.
      timeout: 60_000,
    });
    expect(child.signal).toBeNull();
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
  });
});
