/**
 * What a failed command leaves, and who clears it: locks released on every exit path; a lock whose owner is gone
 * (its pod no longer exists, or its process on this host) removed by the next command that locks; packs in no index
 * removed by the next maintenance at once when no writer can still be running; `check` clean afterwards.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FaultInjectingObjectStore, FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { Repository } from '../../../src/datapath/repository.js';
import { backup } from '../../../src/datapath/uploader.js';
import { check } from '../../../src/datapath/check.js';
import { maintenance } from '../../../src/datapath/maintenance.js';
import { sealFile } from '../../../src/datapath/crypto.js';
import { RepositoryLockedError } from '../../../src/datapath/errors.js';
import { lockVerdict, LOCK_STALE_MS, sameHostLiveness, type LockInfo, type LockLiveness, type LockOwnerPod } from '../../../src/datapath/locks.js';
import { cleanupTempDirs, FAST_KDF, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

const SMALL = { packSize: 256 * 1024, chunkSizes: { min: 64 * 1024, avg: 128 * 1024, max: 256 * 1024 } };
const POD: LockOwnerPod = { namespace: 'velero', name: 'b1-x7k2p', uid: 'uid-of-the-gone-pod' };
/** As a cluster client would answer: the recorded pod no longer exists; nothing known about anyone else. */
const podGone: LockLiveness = async (info) => (info.pod?.uid === POD.uid ? 'gone' : 'unknown');

async function setup() {
  const faulty = new FaultInjectingObjectStore(new FilesystemObjectStore({ root: tempDir('repo'), durability: 'none' }));
  await Repository.init({ store: faulty, password: PASSWORD, kdf: FAST_KDF, ...SMALL });
  return { faulty, open: (locking: Parameters<typeof Repository.open>[0]['locking'] = {}) => Repository.open({ store: faulty, password: PASSWORD, locking }) };
}

function source(): string {
  const src = tempDir('src');
  for (let i = 0; i < 4; i++) writeFileSync(join(src, `f${i}`), randomBytes(300 * 1024));
  return src;
}

async function keys(store: FaultInjectingObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out;
}

/**
 * A backup by pod POD that fails with the store refusing: it could not delete its lock nor index its last packs.
 * The store answers again afterwards.
 */
async function failBackupOfGonePod({ faulty, open }: Awaited<ReturnType<typeof setup>>): Promise<void> {
  faulty.addFault({ ops: ['put'], keyPrefix: 'index/', retryable: false, message: 'connection refused' });
  faulty.addFault({ ops: ['delete'], keyPrefix: 'locks/', retryable: false, message: 'connection refused' });
  await expect(backup({ source: source(), repository: await open({ pod: POD }) })).rejects.toThrow('connection refused');
  faulty.clearFaults();
}

/** A lock as another command would have left it. */
async function plantLock(repo: Repository, info: Partial<LockInfo>): Promise<string> {
  const key = `locks/${randomBytes(16).toString('hex')}`;
  const full: LockInfo = { exclusive: false, time: new Date().toISOString(), hostname: 'elsewhere', pid: 4242, ...info };
  await repo.store.put(key, sealFile(repo.keys, 'lock', Buffer.from(JSON.stringify(full))));
  return key;
}

/** A pid no process has any more (a child that has exited). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

describe('repository locks', () => {
  it('are released when a backup fails', async () => {
    const { faulty, open } = await setup();
    faulty.addFault({ ops: ['put'], keyPrefix: 'data/', after: 1, retryable: false, message: 'AccessDenied' });
    await expect(backup({ source: source(), repository: await open() })).rejects.toThrow('AccessDenied');
    expect(await keys(faulty, 'locks/')).toEqual([]);
  });

  it('left by a command whose pod is gone are removed by the next backup, which records its own pod', async () => {
    const { faulty, open } = await setup();
    await failBackupOfGonePod({ faulty, open });
    const [left] = await keys(faulty, 'locks/');
    expect(left).toBeDefined();
    const repo = await open({ liveness: podGone });
    expect((await repo.locks.read())[0]!.info?.pod).toEqual(POD);

    const next = await repo.locks.lock({ exclusive: false });
    expect(next.others).toEqual([expect.objectContaining({ key: left, verdict: 'owner-gone' })]);
    expect(await keys(faulty, 'locks/')).toEqual([next.key]);
    await next.release();
    expect(await keys(faulty, 'locks/')).toEqual([]);
  });

  it('of a live or unknown owner block maintenance; a gone owner\'s do not', async () => {
    const { open } = await setup();
    const repo = await open({ liveness: podGone });
    const young = await plantLock(repo, {});
    await expect(maintenance({ repository: repo })).rejects.toBeInstanceOf(RepositoryLockedError);
    await repo.store.delete(young);
    // Old, but its pod answers: still held.
    const alive = await plantLock(repo, { time: new Date(Date.now() - 2 * LOCK_STALE_MS).toISOString(), pod: { ...POD, uid: 'live' } });
    const liveness: LockLiveness = async (info) => (info.pod?.uid === 'live' ? 'alive' : 'unknown');
    await expect(maintenance({ repository: await open({ liveness }) })).rejects.toThrow(/held by pod velero\/b1-x7k2p/);
    await repo.store.delete(alive);
    await plantLock(repo, { pod: POD });
    const result = await maintenance({ repository: repo });
    expect(result.staleLocksRemoved).toBe(1);
  });

  it('on this host, a lock whose process has exited is not held; a running one is', async () => {
    const now = Date.now();
    const at = (pid: number) => ({ key: 'locks/x', lastModified: new Date(now), info: { exclusive: true, time: new Date(now).toISOString(), hostname: hostname(), pid } });
    expect(await lockVerdict(at(deadPid()), { now, staleMs: LOCK_STALE_MS })).toBe('owner-gone');
    expect(await lockVerdict(at(process.pid), { now, staleMs: LOCK_STALE_MS })).toBe('held');
    // Elsewhere, or in a pod, pids say nothing: only age counts, unless someone can check.
    expect(sameHostLiveness({ ...at(deadPid()).info, hostname: 'another-host' })).toBe('unknown');
    expect(sameHostLiveness({ ...at(deadPid()).info, pod: POD })).toBe('unknown');
    const old = { ...at(4242), info: { ...at(4242).info, hostname: 'another-host', time: new Date(now - LOCK_STALE_MS - 1).toISOString() } };
    expect(await lockVerdict(old, { now, staleMs: LOCK_STALE_MS })).toBe('stale');
  });

  it('after a failed backup, the next maintenance removes its packs in no index at once when its owner is gone, and check is clean', async () => {
    const { faulty, open } = await setup();
    await failBackupOfGonePod({ faulty, open });
    const before = await check({ repository: await open() });
    expect(before.warnings.join('\n')).toMatch(/not in any index/);

    const result = await maintenance({ repository: await open({ liveness: podGone }) });
    expect(result.staleLocksRemoved).toBe(1);
    expect(result.unindexedPacksDeleted).toBeGreaterThan(0);
    expect(await keys(faulty, 'data/')).toEqual([]);
    const after = await check({ repository: await open(), readData: true });
    expect(after.errors).toEqual([]);
    expect(after.warnings).toEqual([]);
    expect(await keys(faulty, 'locks/')).toEqual([]);
  });

  it('keeps young packs in no index while a lock of an owner nobody can check on was left', async () => {
    const { faulty, open } = await setup();
    faulty.addFault({ ops: ['put'], keyPrefix: 'index/', retryable: false, message: 'connection refused' });
    await expect(backup({ source: source(), repository: await open() })).rejects.toThrow('connection refused');
    faulty.clearFaults();
    const packs = await keys(faulty, 'data/');
    expect(packs.length).toBeGreaterThan(0);
    const repo = await open();
    await plantLock(repo, { time: new Date(Date.now() - 2 * LOCK_STALE_MS).toISOString() });
    const result = await maintenance({ repository: repo });
    expect(result.staleLocksRemoved).toBe(1);
    expect(result.unindexedPacksDeleted).toBe(0);
    expect(await keys(faulty, 'data/')).toEqual(packs);
    // The next maintenance, with nothing left that may still be writing, removes them.
    expect((await maintenance({ repository: await open() })).unindexedPacksDeleted).toBe(packs.length);
  });

  it('check reports the leftover locks it removed', async () => {
    const { open } = await setup();
    const repo = await open({ liveness: podGone });
    await plantLock(repo, { pod: POD });
    const first = await check({ repository: repo });
    expect(first.warnings).toEqual([expect.stringMatching(/^removed a lock held by pod velero\/b1-x7k2p since .*: its command is gone/)]);
    expect((await check({ repository: await open() })).warnings).toEqual([]);
  });
});
