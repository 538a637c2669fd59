import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FaultInjectingObjectStore, FilesystemObjectStore, ObjectStoreError, RetryingObjectStore } from '../../../src/plugins/object-store/index.js';
import { Repository } from '../../../src/datapath/repository.js';
import { backup } from '../../../src/datapath/uploader.js';
import { restore, RestoreFailedError } from '../../../src/datapath/restorer.js';
import { check } from '../../../src/datapath/check.js';
import { CancelledError, RepositoryCorruptError } from '../../../src/datapath/errors.js';
import { cleanupTempDirs, describeTree, FAST_KDF, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const SMALL = { packSize: 1 << 20, chunkSizes: { min: 64 * 1024, avg: 128 * 1024, max: 512 * 1024 } };

function source(files = 6, size = 600 * 1024): string {
  const src = tempDir('src');
  for (let i = 0; i < files; i++) writeFileSync(join(src, `f${i}.bin`), randomBytes(size));
  writeFileSync(join(src, 'notes.txt'), 'text\n'.repeat(1000));
  return src;
}

async function fsRepo(): Promise<{ root: string; store: FilesystemObjectStore; repo: Repository }> {
  const root = tempDir('repo');
  const store = new FilesystemObjectStore({ root, durability: 'none' });
  const repo = await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF, ...SMALL });
  return { root, store, repo };
}

function packFiles(root: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(join(root, 'data'))) for (const f of readdirSync(join(root, 'data', d))) out.push(join(root, 'data', d, f));
  return out.sort((a, b) => statSync(b).size - statSync(a).size);
}

describe('faults', () => {
  it('detects a corrupted pack: restore names the file, check --read-data reports it', async () => {
    const { root, store, repo } = await fsRepo();
    const src = source();
    const { snapshotId } = await backup({ source: src, repository: repo });
    const victim = packFiles(root)[0]!;
    const bytes = readFileSync(victim);
    bytes[100] = bytes[100]! ^ 0xff;
    writeFileSync(victim, bytes);
    const reopened = await Repository.open({ store, password: PASSWORD });
    const r = await restore({ repository: reopened, snapshotId, target: tempDir('dst') });
    expect(r.errors.length).toBeGreaterThan(0);
    expect(r.errors[0]!.reason).toMatch(/corrupted|authentication/);
    const c = await check({ repository: await Repository.open({ store, password: PASSWORD }), readData: true });
    expect(c.errors.join('\n')).toMatch(/does not match its name|corrupted/);
  });

  it('detects a truncated pack', async () => {
    const { root, store, repo } = await fsRepo();
    const { snapshotId } = await backup({ source: source(), repository: repo });
    const victim = packFiles(root)[0]!;
    truncateSync(victim, 1000);
    const c = await check({ repository: await Repository.open({ store, password: PASSWORD }) });
    expect(c.errors.join('\n')).toMatch(/truncated|no valid trailer/);
    const r = await restore({ repository: await Repository.open({ store, password: PASSWORD }), snapshotId, target: tempDir('dst') });
    expect(r.errors.map((e) => e.reason).join('\n')).toMatch(/truncated/);
  });

  it('reports a missing index clearly', async () => {
    const { root, store, repo } = await fsRepo();
    const { snapshotId } = await backup({ source: source(), repository: repo });
    for (const f of readdirSync(join(root, 'index'))) execFileSync('rm', [join(root, 'index', f)]);
    const reopened = await Repository.open({ store, password: PASSWORD });
    await expect(restore({ repository: reopened, snapshotId, target: tempDir('dst') })).rejects.toBeInstanceOf(RepositoryCorruptError);
    const c = await check({ repository: await Repository.open({ store, password: PASSWORD }) });
    expect(c.errors.join('\n')).toMatch(/in no index|not in any index/);
  });

  it('fails cleanly when the store becomes unreachable mid-backup, and a re-run resumes without re-uploading', async () => {
    const root = tempDir('repo');
    const faulty = new FaultInjectingObjectStore(new FilesystemObjectStore({ root, durability: 'none' }));
    const store = new RetryingObjectStore(faulty, { attempts: 3, baseDelayMs: 1 });
    await Repository.init({ store, password: PASSWORD, kdf: FAST_KDF, ...SMALL });
    const src = source(12);
    faulty.addFault({ ops: ['put'], keyPrefix: 'data/', after: 3 });
    const repo = await Repository.open({ store, password: PASSWORD });
    // Checkpoint after every pack so the uploads done before the outage are indexed.
    await expect(backup({ source: src, repository: repo })).rejects.toBeInstanceOf(ObjectStoreError);
    expect(await repo.snapshots.list()).toEqual([]);
    faulty.clearFaults();
    const before = faulty.calls.put;
    const again = await backup({ source: src, repository: await Repository.open({ store, password: PASSWORD }) });
    expect(again.stats.newFiles).toBe(13);
    const uploadedPacks = faulty.calls.put - before;
    expect(uploadedPacks).toBeGreaterThan(0);
    const dst = tempDir('dst');
    const r = await restore({ repository: await Repository.open({ store, password: PASSWORD }), snapshotId: again.snapshotId, target: dst });
    expect(r.errors).toEqual([]);
    expect(describeTree(dst)).toEqual(describeTree(src));
  });

  it('cancel leaves no snapshot', async () => {
    const { repo } = await fsRepo();
    const ac = new AbortController();
    const run = backup({ source: source(8), repository: repo, signal: ac.signal, onProgress: (p) => p.doneBytes > 500_000 && ac.abort(), progressIntervalMs: 0 });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(await repo.snapshots.list()).toEqual([]);
    expect(await repo.locks.read()).toEqual([]);
  });

  it('reports a file it cannot back up and goes on, or fails when told to', async () => {
    const { repo } = await fsRepo();
    const src = source(2);
    // A name that is not valid UTF-8 cannot be stored faithfully: reported with its path, the rest is backed up.
    writeFileSync(Buffer.concat([Buffer.from(src + '/bad-'), Buffer.from([0xff, 0xfe])]), 'x');
    const r = await backup({ source: src, repository: repo });
    expect(r.errors).toEqual([{ path: 'bad-\uFFFD\uFFFD', reason: 'file name is not valid UTF-8; skipped' }]);
    expect(r.stats.files).toBe(3);
    await expect(backup({ source: src, repository: repo, failOnUnreadable: true })).rejects.toThrow(/not valid UTF-8/);
    expect((await repo.snapshots.list()).length).toBe(1);
  });

  it('stops a restore on a full disk with one clear error', async (ctx) => {
    const { repo } = await fsRepo();
    const src = source(6);
    const { snapshotId } = await backup({ source: src, repository: repo });
    const mnt = tempDir('full');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], { stdio: 'ignore' });
    } catch {
      ctx.skip(); // needs root and mount rights; the harness runs as root
      return;
    }
    try {
      await expect(restore({ repository: repo, snapshotId, target: mnt })).rejects.toSatisfy(
        (err: unknown) => err instanceof RestoreFailedError && /no space left on the target/.test((err as Error).message),
      );
      // No partial file: the file being written when the disk filled was removed, every file left is whole.
      const left = readdirSync(mnt);
      expect(left.length).toBeGreaterThan(0);
      for (const name of left) expect(readFileSync(join(mnt, name)).equals(readFileSync(join(src, name)))).toBe(true);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});
