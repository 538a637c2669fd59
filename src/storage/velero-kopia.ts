/**
 * Velero's kopia repositories, from cairn's side. Velero keeps a kopia repository per (location, volume namespace)
 * under `kopia/<namespace>/`, where cairn keeps its own; cairn never writes into one, it only restores from it.
 * Velero protects all of them with the password in Secret `velero-repo-credentials` (key `repository-password`),
 * which Velero creates as `static-passw0rd` unless the user set another. The same Secret names cairn's password, so
 * when cairn is installed where Velero was, the password is already right; when the Secret's password (cairn's,
 * random) does not open a Velero repository, Velero's default is tried too.
 */
import { WrongPasswordError } from '../datapath/errors.js';
import { KopiaRepository } from '../datapath/kopia/repository.js';
import type { ObjectStore } from '../plugins/object-store/index.js';

/** The password Velero puts in velero-repo-credentials when it creates the Secret. */
export const VELERO_DEFAULT_REPOSITORY_PASSWORD = 'static-passw0rd';

export type PasswordSource = 'secret' | 'velero-default';

/** Neither the Secret's password nor Velero's default opens the repository. */
export class VeleroRepositoryPasswordError extends WrongPasswordError {
  constructor(where: string) {
    super();
    this.message = `the Velero kopia repository at ${where} opens neither with the password in Secret velero-repo-credentials nor with Velero's default; put the password Velero used into that Secret's key repository-password`;
  }
}

export function holdsVeleroKopiaRepository(store: ObjectStore): Promise<boolean> {
  return KopiaRepository.exists(store);
}

/** The candidate passwords, the Secret's first. */
function candidates(secretPassword: string): { password: string; source: PasswordSource }[] {
  const list: { password: string; source: PasswordSource }[] = [{ password: secretPassword, source: 'secret' }];
  if (secretPassword !== VELERO_DEFAULT_REPOSITORY_PASSWORD) list.push({ password: VELERO_DEFAULT_REPOSITORY_PASSWORD, source: 'velero-default' });
  return list;
}

function wrapWrongPassword(err: unknown, where: string): unknown {
  return err instanceof WrongPasswordError ? new VeleroRepositoryPasswordError(where) : err;
}

/** Which password opens the repository (cheap: only its format blob is read). */
export async function veleroKopiaPassword(store: ObjectStore, secretPassword: string): Promise<PasswordSource> {
  const list = candidates(secretPassword);
  try {
    return list[await KopiaRepository.checkPassword(store, list.map((c) => c.password))]!.source;
  } catch (err) {
    throw wrapWrongPassword(err, store.description);
  }
}

/** Opens a Velero kopia repository for reading with the first password that works. */
export async function openVeleroKopiaRepository(opts: { store: ObjectStore; secretPassword: string; signal?: AbortSignal }): Promise<{ repository: KopiaRepository; passwordSource: PasswordSource }> {
  const list = candidates(opts.secretPassword);
  try {
    const repository = await KopiaRepository.open({ store: opts.store, password: list.map((c) => c.password), ...(opts.signal ? { signal: opts.signal } : {}) });
    return { repository, passwordSource: list[repository.passwordIndex]!.source };
  } catch (err) {
    throw wrapWrongPassword(err, opts.store.description);
  }
}
