/** Which password opens a Velero kopia repository: the Secret's, else Velero's default; a clear error otherwise. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';
import { holdsVeleroKopiaRepository, openVeleroKopiaRepository, VeleroRepositoryPasswordError, veleroKopiaPassword } from '../../../../src/storage/velero-kopia.js';

const FIXTURE = join(import.meta.dirname, '../../../fixtures/kopia/repos/velero-default');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the password of a Velero kopia repository', () => {
  const store = new FilesystemObjectStore({ root: FIXTURE });

  it("is the Secret's when it opens the repository", async () => {
    expect(await veleroKopiaPassword(store, 'static-passw0rd')).toBe('secret');
  });

  it("falls back to Velero's default when the Secret holds another (cairn's random one)", async () => {
    expect(await veleroKopiaPassword(store, 'a-random-cairn-password')).toBe('velero-default');
    const { repository, passwordSource } = await openVeleroKopiaRepository({ store, secretPassword: 'a-random-cairn-password' });
    expect(passwordSource).toBe('velero-default');
    expect(repository.listSnapshots()).toHaveLength(1);
  });

  it('says what to do when neither opens it, without the password', async () => {
    const other = new FilesystemObjectStore({ root: join(FIXTURE, '..', 'other-password') });
    const err = await veleroKopiaPassword(other, 'a-random-cairn-password').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VeleroRepositoryPasswordError);
    expect((err as Error).message).toMatch(/^the Velero kopia repository at .*other-password opens neither with the password in Secret velero-repo-credentials nor with Velero's default; put the password Velero used into that Secret's key repository-password$/);
    expect((err as Error).message).not.toContain('a-random-cairn-password');
    expect(await veleroKopiaPassword(other, 'not-velero-default')).toBe('secret');
  });

  it('tells a Velero repository from an empty place', async () => {
    expect(await holdsVeleroKopiaRepository(store)).toBe(true);
    const empty = mkdtempSync(join(tmpdir(), 'velero-kopia-none-'));
    dirs.push(empty);
    expect(await holdsVeleroKopiaRepository(new FilesystemObjectStore({ root: empty }))).toBe(false);
  });
});
