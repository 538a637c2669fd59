/**
 * Repository locks (docs/repository-format.md §8): every command writes `locks/<random>` before it reads or writes,
 * refreshes it while it runs and deletes it at the end. Maintenance takes an exclusive lock; everything else shares.
 *
 * A lock whose command is gone must not block maintenance for long, nor stay in the bucket for ever. A lock is not
 * held any more when its owner is known to be gone (the pod that wrote it no longer exists, or on this host the
 * process is not running), or when nobody can tell and it has not been refreshed for LOCK_STALE_MS. Taking a lock
 * removes such leftovers, so the next backup, restore, check or maintenance after a crash cleans up after it.
 */
import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import type { ObjectStore } from '../plugins/object-store/types.js';
import { isNotFound } from '../plugins/object-store/errors.js';
import { openFile, sealFile, type MasterKeys } from './crypto.js';
import { RepositoryLockedError } from './errors.js';

/** A lock not refreshed for this long, by an owner nobody can check on, is stale (restic's figure). */
export const LOCK_STALE_MS = 30 * 60_000;
export const LOCK_REFRESH_MS = 5 * 60_000;

/** The Kubernetes pod a lock's command runs in (data-mover pods record theirs), so others can check it still exists. */
export interface LockOwnerPod {
  namespace: string;
  name: string;
  uid: string;
}

export interface LockInfo {
  exclusive: boolean;
  time: string;
  hostname: string;
  pid: number;
  pod?: LockOwnerPod;
}

export type OwnerLiveness = 'alive' | 'gone' | 'unknown';

/** Tells whether the command that wrote a lock still runs (e.g. by looking its pod up); 'unknown' when it cannot. */
export type LockLiveness = (info: LockInfo) => Promise<OwnerLiveness>;

export interface LockingOptions {
  /** Recorded in this process's locks: the pod it runs in. */
  pod?: LockOwnerPod;
  /** Checks other locks' owners beyond this host's processes. */
  liveness?: LockLiveness;
}

export interface LockOptions {
  exclusive: boolean;
  staleMs?: number;
  refreshMs?: number;
}

/** Another lock seen when taking ours, and what became of it. */
export interface OtherLock {
  key: string;
  info: LockInfo | undefined;
  /**
   * held: its command may still run (shared locks only: a conflicting held lock fails the lock call);
   * owner-gone / stale: removed as a leftover; unreadable: left alone until stale by its object's age.
   */
  verdict: 'held' | 'owner-gone' | 'stale' | 'unreadable';
}

export interface HeldLock {
  key: string;
  /** The other locks found when this one was taken; leftovers among them have been deleted. */
  others: OtherLock[];
  release(): Promise<void>;
}

export interface StoredLock {
  key: string;
  info: LockInfo | undefined;
  lastModified: Date;
}

/** On this host, whether a lock's process still runs; 'unknown' for other hosts and for pods (pids are per pod). */
export function sameHostLiveness(info: LockInfo, host = osHostname()): OwnerLiveness {
  if (info.pod || info.hostname !== host || !Number.isSafeInteger(info.pid) || info.pid <= 0) return 'unknown';
  if (info.pid === process.pid) return 'alive';
  try {
    process.kill(info.pid, 0);
    return 'alive';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 'gone' : 'alive';
  }
}

/** Whether a lock still counts: its owner's liveness first, its age when nobody can tell. */
export async function lockVerdict(
  lock: StoredLock,
  opts: { now: number; staleMs: number; liveness?: LockLiveness | undefined },
): Promise<OtherLock['verdict']> {
  const { info } = lock;
  if (!info) return opts.now - lock.lastModified.getTime() > opts.staleMs ? 'stale' : 'unreadable';
  let owner = sameHostLiveness(info);
  if (owner === 'unknown' && opts.liveness) owner = await opts.liveness(info).catch((): OwnerLiveness => 'unknown');
  if (owner === 'gone') return 'owner-gone';
  if (owner === 'alive') return 'held';
  const time = Date.parse(info.time);
  const age = opts.now - (Number.isFinite(time) ? time : lock.lastModified.getTime());
  return age > opts.staleMs ? 'stale' : 'held';
}

export function describeLock(info: LockInfo): string {
  const where = info.pod ? `pod ${info.pod.namespace}/${info.pod.name}` : `pid ${info.pid} on ${info.hostname}`;
  return `${info.exclusive ? 'an exclusive lock (maintenance)' : 'a lock'} held by ${where} since ${info.time}`;
}

export class RepositoryLocks {
  constructor(
    private readonly store: ObjectStore,
    private readonly keys: MasterKeys,
    private readonly locking: LockingOptions = {},
  ) {}

  async read(): Promise<StoredLock[]> {
    const out: StoredLock[] = [];
    for await (const o of this.store.list('locks/')) {
      try {
        const sealed = await this.store.get(o.key);
        out.push({ key: o.key, info: JSON.parse(openFile(this.keys, 'lock', sealed, 'lock').toString()) as LockInfo, lastModified: o.lastModified });
      } catch (err) {
        if (!isNotFound(err)) out.push({ key: o.key, info: undefined, lastModified: o.lastModified });
      }
    }
    return out;
  }

  /**
   * Takes a shared or exclusive lock: write ours, then look at the others (both sides write before they look, so
   * two conflicting commands cannot both proceed). Leftovers of gone commands are deleted on the way. Refreshed in the
   * background until released.
   */
  async lock(options: LockOptions): Promise<HeldLock> {
    const staleMs = options.staleMs ?? LOCK_STALE_MS;
    const key = `locks/${randomBytes(16).toString('hex')}`;
    const info = (): LockInfo => ({
      exclusive: options.exclusive,
      time: new Date().toISOString(),
      hostname: osHostname(),
      pid: process.pid,
      ...(this.locking.pod ? { pod: this.locking.pod } : {}),
    });
    const write = () => this.store.put(key, sealFile(this.keys, 'lock', Buffer.from(JSON.stringify(info()))));
    await write();
    const now = Date.now();
    const others: OtherLock[] = [];
    try {
      for (const other of await this.read()) {
        if (other.key === key) continue;
        const verdict = await lockVerdict(other, { now, staleMs, liveness: this.locking.liveness });
        if (verdict === 'held' && (options.exclusive || other.info?.exclusive)) {
          throw new RepositoryLockedError(`repository is locked: ${describeLock(other.info!)}`);
        }
        others.push({ key: other.key, info: other.info, verdict });
      }
    } catch (err) {
      await this.store.delete(key).catch(() => undefined);
      throw err;
    }
    // Leftovers go now: a lock already judged not held is garbage whoever deletes it (deleting twice is harmless).
    for (const o of others) if (o.verdict === 'owner-gone' || o.verdict === 'stale') await this.store.delete(o.key).catch(() => undefined);
    const timer = setInterval(() => void write().catch(() => undefined), options.refreshMs ?? LOCK_REFRESH_MS);
    timer.unref();
    return {
      key,
      others,
      release: async () => {
        clearInterval(timer);
        await this.store.delete(key);
      },
    };
  }
}
