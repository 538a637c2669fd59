import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newBackupRepository, newBackupStorageLocation, type BackupRepository, type BackupStorageLocation } from '../../../../src/api/index.js';
import { formatTable } from '../../../../src/cli/output.js';
import { repositoryColumns } from '../../../../src/commands/repo/get.js';
import { WrongPasswordError } from '../../../../src/datapath/errors.js';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';
import { locationProblem, unsupportedRepository } from '../../../../src/server/backup-repository-controller.js';
import { ForeignRepositoryError, connectOrInitialise, describeConnectError, describeMaintenance, runMaintenance } from '../../../../src/server/repository/connect.js';
import {
  RECENT_MAINTENANCE_KEPT,
  maintenanceDueInMs,
  maintenanceFrequencyMs,
  maintenanceFrequencyText,
  pickRepository,
  repositoryLabels,
  repositoryName,
  repositorySelector,
  withMaintenanceEntry,
} from '../../../../src/server/repository/naming.js';
import { repositoryStoragePrefix } from '../../../../src/storage/repository-store.js';

const HOUR = 3600_000;
const now = new Date('2026-01-01T12:00:00Z');

function repo(opts: { frequency?: string; last?: string; name?: string } = {}): BackupRepository {
  const r = newBackupRepository({
    namespace: 'velero',
    name: opts.name ?? 'app-default-kopia',
    spec: { volumeNamespace: 'app', backupStorageLocation: 'default', repositoryType: 'kopia', maintenanceFrequency: opts.frequency ?? '1h0m0s' },
  });
  return opts.last ? { ...r, status: { phase: 'Ready', lastMaintenanceTime: opts.last } } : r;
}

describe('repository naming', () => {
  it("uses Velero's name and lookup labels", () => {
    const id = { bsl: 'default', volumeNamespace: 'app' };
    expect(repositoryName(id)).toBe('app-default-kopia');
    expect(repositoryLabels(id)).toEqual({ 'velero.io/volume-namespace': 'app', 'velero.io/storage-location': 'default', 'velero.io/repository-type': 'kopia' });
    expect(repositorySelector(id)).toBe('velero.io/volume-namespace=app,velero.io/storage-location=default,velero.io/repository-type=kopia');
  });

  it('keeps long identities valid and distinct', () => {
    const bsl = 'l'.repeat(240);
    const a = repositoryName({ bsl, volumeNamespace: 'ns-a' });
    const b = repositoryName({ bsl, volumeNamespace: 'ns-b' });
    expect(a.length).toBeLessThanOrEqual(253);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    // Label values are Velero's shortened form (≤ 63 characters).
    expect(repositoryLabels({ bsl, volumeNamespace: 'ns-a' })['velero.io/storage-location']!.length).toBe(63);
  });

  it('refuses to choose between two repositories for one identity', () => {
    expect(pickRepository([], { bsl: 'default', volumeNamespace: 'app' })).toBeUndefined();
    expect(() => pickRepository([repo({ name: 'one' }), repo({ name: 'two' })], { bsl: 'default', volumeNamespace: 'app' })).toThrow(/more than one BackupRepository .*one, two/);
  });

  it('puts the repository under the location prefix at kopia/<namespace>/', () => {
    expect(repositoryStoragePrefix(undefined, 'app')).toBe('kopia/app/');
    expect(repositoryStoragePrefix('', 'app')).toBe('kopia/app/');
    expect(repositoryStoragePrefix('team/cluster1/', 'app')).toBe('team/cluster1/kopia/app/');
  });
});

describe('maintenance schedule', () => {
  it("defaults to Velero's kopia period of one hour", () => {
    expect(maintenanceFrequencyText()).toBe('1h0m0s');
    expect(maintenanceFrequencyMs(repo({ frequency: '30m' }))).toBe(30 * 60_000);
    expect(maintenanceFrequencyMs(repo({ frequency: 'soon' }))).toBe(HOUR);
    expect(maintenanceFrequencyMs(repo({ frequency: '0s' }))).toBe(HOUR);
  });

  it('is due one period after the last maintenance, or now when there was none', () => {
    expect(maintenanceDueInMs(repo(), now)).toBe(0);
    expect(maintenanceDueInMs(repo({ last: '2026-01-01T11:30:00Z' }), now)).toBe(30 * 60_000);
    expect(maintenanceDueInMs(repo({ last: '2026-01-01T10:00:00Z' }), now)).toBe(0);
  });

  it('keeps the last three maintenance results, newest last', () => {
    let history = withMaintenanceEntry(undefined, { result: 'Succeeded', message: 'm0' });
    for (let i = 1; i < 5; i++) history = withMaintenanceEntry(history, { result: i % 2 ? 'Failed' : 'Succeeded', message: `m${i}` });
    expect(history).toHaveLength(RECENT_MAINTENANCE_KEPT);
    expect(history.map((h) => h.message)).toEqual(['m2', 'm3', 'm4']);
  });
});

describe('locationProblem', () => {
  const bsl = (phase?: 'Available' | 'Unavailable', message?: string): BackupStorageLocation => ({
    ...newBackupStorageLocation({ name: 'default', spec: { provider: 'aws', objectStorage: { bucket: 'b' } } }),
    ...(phase ? { status: { phase, ...(message ? { message } : {}) } } : {}),
  });
  it('names a missing or Unavailable location, and accepts one not yet validated', () => {
    expect(locationProblem('default', undefined)).toBe('backup storage location "default" not found');
    expect(locationProblem('default', bsl('Unavailable', 'bucket "x" does not exist'))).toBe('backup storage location "default" is unavailable: bucket "x" does not exist');
    expect(locationProblem('default', bsl('Available'))).toBeUndefined();
    expect(locationProblem('default', bsl())).toBeUndefined();
  });
});

describe('unsupportedRepository', () => {
  it('serves kopia (and untyped) repositories only', () => {
    expect(unsupportedRepository(repo())).toBeUndefined();
    const untyped = repo();
    delete untyped.spec.repositoryType;
    expect(unsupportedRepository(untyped)).toBeUndefined();
    const restic = repo();
    restic.spec.repositoryType = 'restic';
    expect(unsupportedRepository(restic)).toBe('repository type "restic" is not supported: cairn keeps fs-backup data in its own repositories under kopia/');
  });
});

describe('connecting and maintaining with the data path', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const store = () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-repo-unit-'));
    dirs.push(dir);
    return new FilesystemObjectStore({ root: dir, durability: 'none' });
  };

  it('initialises a missing repository, opens it afterwards, and runs maintenance', async () => {
    const s = store();
    const first = await connectOrInitialise({ store: s, password: 'pw-one' });
    expect(first.initialised).toBe(true);
    const second = await connectOrInitialise({ store: s, password: 'pw-one' });
    expect(second.initialised).toBe(false);
    expect(second.repository.config.id).toBe(first.repository.config.id);
    const result = await runMaintenance({ store: s, password: 'pw-one' });
    expect(result.snapshots).toBe(0);
    expect(describeMaintenance({ result })).toMatch(/^0 snapshots; packs: 0 deleted/);
  });

  it('never initialises over objects that are not a cairn repository', async () => {
    const s = store();
    await s.put('kopia.repository', Buffer.from('{}'));
    const err = await connectOrInitialise({ store: s, password: 'pw' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForeignRepositoryError);
    expect(describeConnectError(err, 'b/kopia/app/')).toMatch(/holds objects that are not a cairn repository \(for example "kopia.repository"/);
    expect(await s.head('config')).toBeUndefined();
  });

  it('initialises where an interrupted initialisation left only a key file', async () => {
    const s = store();
    await s.put('keys/leftover', Buffer.from('{}'));
    expect((await connectOrInitialise({ store: s, password: 'pw' })).initialised).toBe(true);
  });

  it('explains a wrong password without the password', async () => {
    const s = store();
    await connectOrInitialise({ store: s, password: 'the-right-one' });
    const err = await connectOrInitialise({ store: s, password: 'secret-guess-123' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongPasswordError);
    const message = describeConnectError(err, 'bucket/kopia/app/');
    expect(message).toMatch(/does not open with the password in Secret velero-repo-credentials/);
    expect(message).not.toContain('secret-guess-123');
    expect(message).not.toContain('the-right-one');
  });
});

describe('repo get table', () => {
  it('shows name, status and last maintenance', () => {
    const table = formatTable(repositoryColumns, [repo({ last: '2026-01-01T11:00:00Z' }), repo({ name: 'other-default-kopia' })]);
    expect(table.split('\n')).toEqual([
      expect.stringMatching(/^NAME\s{3,}STATUS\s{3,}LAST MAINTENANCE$/),
      expect.stringMatching(/^app-default-kopia\s{3,}Ready\s{3,}2026-01-01T11:00:00Z$/),
      expect.stringMatching(/^other-default-kopia\s{3,}New\s{3,}<never>$/),
    ]);
  });
});
