/**
 * The Schedule controller against the real API server, with a fake clock: hours of cron cadence play out in
 * milliseconds. The controller runs in this process for one namespace. Backups it makes stay `New` unless a test
 * moves them on (no backup controller runs) — except the TTL test, which runs the backup, GC and deletion
 * controllers against MinIO with the same clock.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Kinds,
  Labels,
  allCrds,
  backupFromSchedule,
  newSchedule,
  type Backup,
  type Schedule,
  type ScheduleSpec,
} from '../../src/api/index.js';
import { statusTime } from '../../src/api/time.js';
import { kubeFromConfig, type Kube } from '../../src/kube/client.js';
import { customClient } from '../../src/kube/custom.js';
import type { ServerContext, Stoppable } from '../../src/server/context.js';
import { startScheduleController } from '../../src/server/schedule/schedule-controller.js';
import { startBackupController } from '../../src/server/backup/backup-controller.js';
import { startGcController } from '../../src/server/gc-controller.js';
import { startDeleteBackupRequestController } from '../../src/server/delete-backup-request-controller.js';
import { kubeConfig, kubectl } from '../support/cluster.js';
import { FakeClock } from '../support/fake-clock.js';
import { bucketLocation, credentialsSecret, inProcessContext } from '../support/in-process-server.js';
import { veleroClients } from '../support/velero-clients.js';
import { waitFor } from '../support/wait.js';

const RUN = randomBytes(3).toString('hex');
const NS = `cairn-sched-${RUN}`;
const PREFIX = `schedule-it-${RUN}`;
const HOUR = 3600_000;

let kube: Kube;
let clock: FakeClock;
let ctx: ServerContext;
let controller: Stoppable | undefined;

const schedules = () => customClient<Schedule>(kube, Kinds.Schedule, (o) => o as Schedule);
const backups = () => customClient<Backup>(kube, Kinds.Backup, (o) => o as Backup);

async function startSchedules(): Promise<void> {
  controller = await startScheduleController(ctx);
}
async function stopSchedules(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}

/**
 * A schedule in NS. The API server stamps its creation with the real time, which the fake clock leaves behind once
 * a test moved it on; so unless `fresh`, it is created as if it had just run (lastBackup = the fake now).
 */
async function createSchedule(name: string, spec: Partial<ScheduleSpec> = {}, opts: { fresh?: boolean } = {}): Promise<Schedule> {
  const s = newSchedule({ namespace: NS, name, spec: { schedule: '0 * * * *', template: { includedNamespaces: [NS], ttl: '2h0m0s' }, ...spec } });
  return schedules().create(opts.fresh ? s : { ...s, status: { lastBackup: clock.date().toISOString() } });
}

async function backupsOf(name: string): Promise<Backup[]> {
  const list = await backups().list(NS, `${Labels.ScheduleName}=${name}`);
  return list.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

async function namesOf(name: string): Promise<string[]> {
  return (await backupsOf(name)).map((b) => b.metadata.name ?? '');
}

/** Waits until the schedule's backups are exactly `expected` and it has recorded `lastBackup` at the clock's time. */
async function settled(name: string, expected: string[], opts: { lastBackup?: Date } = {}): Promise<Schedule> {
  return waitFor(
    async () => {
      const s = await schedules().get(NS, name);
      const names = await namesOf(name);
      if (JSON.stringify(names) !== JSON.stringify(expected)) return undefined;
      if (opts.lastBackup && s?.status?.lastBackup !== statusTime(opts.lastBackup)) return undefined;
      return s;
    },
    { timeoutMs: 20_000, description: `schedule ${name} with backups [${expected.join(', ')}]${opts.lastBackup ? ` and lastBackup ${statusTime(opts.lastBackup)}` : ''}` },
  );
}

/** Proves nothing more happens: the controller has had time to act on what is due and made nothing else. */
async function stillOnly(name: string, expected: string[]): Promise<void> {
  // A change the controller reacts to (a label poke) makes it look at the schedule once more; what must not
  // appear would appear within a second of that.
  const deadline = Date.now() + 1500;
  while (Date.now() < deadline) {
    expect(await namesOf(name)).toEqual(expected);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function setPhase(name: string, phase: NonNullable<Backup['status']>['phase']): Promise<void> {
  await backups().updateStatus(NS, name, (b) => {
    b.status = { ...b.status, phase };
  });
}

/** The first whole hour after `d`. */
function nextHour(d: Date): Date {
  return new Date(Math.floor(d.getTime() / HOUR) * HOUR + HOUR);
}
function stamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, '').replace(/[-:T]/g, '');
}

beforeAll(async () => {
  kube = kubeFromConfig(kubeConfig());
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: allCrds() }) });
  await kubectl(['wait', '--for=condition=established', '--timeout=60s', 'crd/schedules.velero.io', 'crd/backups.velero.io', 'crd/deletebackuprequests.velero.io']);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(credentialsSecret(NS)) });
  const { locations } = veleroClients(kube);
  await locations.create(bucketLocation({ namespace: NS, name: 'default', prefix: PREFIX, default: true }));
  // Garbage collection expires only backups whose location is Available (no location controller runs here).
  await locations.updateStatus(NS, 'default', (l) => {
    l.status = { phase: 'Available' };
  });

  clock = new FakeClock(new Date());
  ctx = inProcessContext(kube, NS, { component: 'schedule-it', level: 'warn', clock });
  await startSchedules();
}, 120_000);

afterAll(async () => {
  await stopSchedules();
  await kubectl(['delete', 'namespace', NS, '--wait=false'], { allowFailure: true });
});

describe('schedule controller (fake clock, real API server)', () => {
  it('makes a backup at each activation, named after it, with the template, its TTL and the schedule-name label', async () => {
    const created = await createSchedule('hourly', { template: { includedNamespaces: [NS], ttl: '2h0m0s', metadata: { labels: { tier: 'gold' } } } }, { fresh: true });
    const createdAt = Date.parse(String((created.metadata as { creationTimestamp?: string }).creationTimestamp));
    await waitFor(async () => (await schedules().get(NS, 'hourly'))?.status?.phase === 'Enabled', { timeoutMs: 20_000, description: 'schedule Enabled' });
    await stillOnly('hourly', []); // a new schedule makes nothing at once (Velero: counted from its creation)

    const first = nextHour(new Date(Math.max(clock.now(), createdAt)));
    clock.advanceTo(first);
    const s1 = await settled('hourly', [`hourly-${stamp(first)}`], { lastBackup: first });
    const [b1] = await backupsOf('hourly');
    expect(b1?.metadata.labels).toEqual({ tier: 'gold', [Labels.ScheduleName]: 'hourly' });
    expect(b1?.spec).toMatchObject({ includedNamespaces: [NS], ttl: '2h0m0s' });
    expect(b1?.metadata.ownerReferences).toBeUndefined();
    expect(s1.status?.phase).toBe('Enabled');

    await setPhase(`hourly-${stamp(first)}`, 'Completed');
    clock.advance(30 * 60_000);
    await stillOnly('hourly', [`hourly-${stamp(first)}`]);
    const second = new Date(first.getTime() + HOUR);
    clock.advanceTo(second);
    await settled('hourly', [`hourly-${stamp(first)}`, `hourly-${stamp(second)}`], { lastBackup: second });
    await schedules().delete(NS, 'hourly');
  });

  it('a server down across missed activations makes one backup when it comes back; restarts never make two for one run', async () => {
    await createSchedule('missed');
    const first = nextHour(clock.date());
    clock.advanceTo(first);
    await settled('missed', [`missed-${stamp(first)}`], { lastBackup: first });
    await setPhase(`missed-${stamp(first)}`, 'Completed');

    // Down for three activations and a bit.
    await stopSchedules();
    const back = new Date(first.getTime() + 3 * HOUR + 20 * 60_000);
    clock.advanceTo(back);
    await startSchedules();
    const latest = new Date(first.getTime() + 3 * HOUR);
    await settled('missed', [`missed-${stamp(first)}`, `missed-${stamp(latest)}`], { lastBackup: back });
    await stillOnly('missed', [`missed-${stamp(first)}`, `missed-${stamp(latest)}`]);
    await setPhase(`missed-${stamp(latest)}`, 'Completed');

    // A server that created the next run's backup and stopped before recording the run, restarted twice.
    await stopSchedules();
    const next = new Date(latest.getTime() + HOUR);
    clock.advanceTo(new Date(next.getTime() + 5_000));
    const made = (await schedules().get(NS, 'missed')) as Schedule;
    await backups().create(backupFromSchedule(made, `missed-${stamp(next)}`));
    const recordedAt = clock.date();
    for (let restart = 0; restart < 2; restart++) {
      await startSchedules();
      await settled('missed', [`missed-${stamp(first)}`, `missed-${stamp(latest)}`, `missed-${stamp(next)}`], { lastBackup: recordedAt });
      await stillOnly('missed', [`missed-${stamp(first)}`, `missed-${stamp(latest)}`, `missed-${stamp(next)}`]);
      await stopSchedules();
      clock.advance(1000);
    }
    await startSchedules();
    await schedules().delete(NS, 'missed');
  });

  it('holds a due run back while the previous backup still runs, and makes it once that one ends', async () => {
    await createSchedule('busy');
    const first = nextHour(clock.date());
    clock.advanceTo(first);
    await settled('busy', [`busy-${stamp(first)}`], { lastBackup: first });
    await setPhase(`busy-${stamp(first)}`, 'WaitingForPluginOperations');

    clock.advanceTo(new Date(first.getTime() + 2 * HOUR + 10_000));
    await stillOnly('busy', [`busy-${stamp(first)}`]);
    // It ends: the schedule (woken by the backup's change) makes the run due now, and only that one.
    await setPhase(`busy-${stamp(first)}`, 'Completed');
    const due = new Date(first.getTime() + 2 * HOUR);
    await settled('busy', [`busy-${stamp(first)}`, `busy-${stamp(due)}`], { lastBackup: clock.date() });
    await schedules().delete(NS, 'busy');
  });

  it('pause and unpause: nothing while paused; unpaused, the due run is made at once, or skipped with skipImmediately', async () => {
    await createSchedule('pausy', { paused: true });
    const first = nextHour(clock.date());
    clock.advanceTo(new Date(first.getTime() + 3 * HOUR));
    await stillOnly('pausy', []);
    const enabled = await schedules().get(NS, 'pausy');
    expect(enabled?.status?.phase).toBe('Enabled');

    await schedules().update(NS, 'pausy', (s) => void (s.spec.paused = false));
    const latest = new Date(first.getTime() + 3 * HOUR);
    await settled('pausy', [`pausy-${stamp(latest)}`], { lastBackup: clock.date() });
    await setPhase(`pausy-${stamp(latest)}`, 'Completed');

    await schedules().update(NS, 'pausy', (s) => void (s.spec.paused = true));
    clock.advance(2 * HOUR);
    await stillOnly('pausy', [`pausy-${stamp(latest)}`]);
    await schedules().update(NS, 'pausy', (s) => {
      s.spec.paused = false;
      s.spec.skipImmediately = true;
    });
    const skipped = await waitFor(async () => {
      const s = await schedules().get(NS, 'pausy');
      return s?.status?.lastSkipped === statusTime(clock.date()) ? s : undefined;
    }, { timeoutMs: 20_000, description: 'skip recorded' });
    expect(skipped.spec.skipImmediately).toBe(false);
    await stillOnly('pausy', [`pausy-${stamp(latest)}`]);
    // The next activation after the skip is made as usual.
    const after = nextHour(clock.date());
    clock.advanceTo(after);
    await settled('pausy', [`pausy-${stamp(latest)}`, `pausy-${stamp(after)}`], { lastBackup: after });
    await schedules().delete(NS, 'pausy');
  });

  it('useOwnerReferencesInBackup: the backups are owned by the schedule and go with it', async () => {
    const s = await createSchedule('owned', { useOwnerReferencesInBackup: true, schedule: '@every 30m' });
    const first = new Date(Math.floor(clock.now() / 1000) * 1000 + 30 * 60_000);
    clock.advanceTo(first);
    const [b] = await settled('owned', [`owned-${stamp(first)}`]).then(() => backupsOf('owned'));
    expect(b?.metadata.ownerReferences).toEqual([{ apiVersion: 'velero.io/v1', kind: 'Schedule', name: 'owned', uid: s.metadata.uid, controller: true }]);
    await schedules().delete(NS, 'owned');
    // Kubernetes' garbage collector removes the owned Backup.
    await waitFor(async () => (await namesOf('owned')).length === 0, { timeoutMs: 60_000, description: 'owned backups deleted with their schedule' });
  });

  it('FailedValidation naming the field, and nothing made: bad cron, unknown storage location', async () => {
    await createSchedule('bad-cron', { schedule: '0 25 * * *' });
    await createSchedule('bad-location', { template: { storageLocation: 'nowhere' } });
    const badCron = await waitFor(async () => {
      const s = await schedules().get(NS, 'bad-cron');
      return s?.status?.phase === 'FailedValidation' ? s : undefined;
    }, { timeoutMs: 20_000, description: 'bad-cron FailedValidation' });
    expect(badCron.status?.validationErrors?.join('\n')).toContain('invalid schedule:');
    const badLocation = await waitFor(async () => {
      const s = await schedules().get(NS, 'bad-location');
      return s?.status?.phase === 'FailedValidation' ? s : undefined;
    }, { timeoutMs: 20_000, description: 'bad-location FailedValidation' });
    expect(badLocation.status?.validationErrors).toEqual([`spec.template.storageLocation: backup storage location "nowhere" not found in namespace ${NS}`]);
    clock.advance(3 * HOUR);
    await stillOnly('bad-cron', []);
    await stillOnly('bad-location', []);
    // Fixed, it is Enabled again (validation runs on every pass).
    await schedules().update(NS, 'bad-cron', (s) => void (s.spec.schedule = '0 * * * *'));
    await waitFor(async () => (await schedules().get(NS, 'bad-cron'))?.status?.phase === 'Enabled', { timeoutMs: 20_000, description: 'bad-cron Enabled once fixed' });
    expect((await schedules().get(NS, 'bad-cron'))?.status?.validationErrors).toBeUndefined();
    await schedules().delete(NS, 'bad-cron');
    await schedules().delete(NS, 'bad-location');
  });

  it('scheduled backups run and expire at their TTL (backup, GC and deletion controllers on the same clock)', async () => {
    const others: Stoppable[] = [await startBackupController(ctx), await startGcController(ctx), await startDeleteBackupRequestController(ctx)];
    try {
      await createSchedule('ttl', { template: { includedNamespaces: [NS], includedResources: ['secrets'], ttl: '2h0m0s' } });
      const first = nextHour(clock.date());
      clock.advanceTo(first);
      const name = `ttl-${stamp(first)}`;
      const done = await waitFor(async () => {
        const b = (await backupsOf('ttl'))[0];
        if (b?.status?.phase === 'Completed') return b;
        throw new Error(`backup ${b?.metadata.name ?? '(none yet)'} is ${b?.status?.phase ?? 'New'}${b?.status?.failureReason ? `: ${b.status.failureReason}` : ''}`);
      }, { timeoutMs: 180_000, description: `${name} Completed` });
      expect(done.metadata.name).toBe(name);
      expect(done.status?.expiration).toBe(statusTime(new Date(first.getTime() + 2 * HOUR)));
      await schedules().update(NS, 'ttl', (s) => void (s.spec.paused = true));

      clock.advance(HOUR);
      await stillOnly('ttl', [name]);
      clock.advance(HOUR + 60_000);
      await waitFor(async () => (await namesOf('ttl')).length === 0, { timeoutMs: 60_000, description: `${name} deleted at its expiration` });
    } finally {
      for (const c of others.reverse()) await c.stop();
      await schedules().delete(NS, 'ttl');
    }
  });
});
