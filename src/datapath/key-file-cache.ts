/**
 * The key file that last opened a repository, kept in cairn's cache directory so that the next command on that
 * repository starts deriving its key (scrypt, ~0.1 s of CPU and 64 MiB) at once, on the thread pool, while it loads
 * the object-store client and reads the repository's config and key list, instead of after them.
 *
 * What is kept is what the repository's own `keys/` object holds: the scrypt parameters, the salt and the master keys
 * sealed under the password's key; never the password nor a key. It is only a head start: the repository's key files
 * are still listed and read on every open, and the early derivation is used only for a key file with the same
 * parameters and salt (a key removed from the repository no longer opens it, cached or not). A cache that cannot be
 * read or written is skipped.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deriveKek, kdfFingerprint, type EarlyDerivations, type KeyFile } from './keys.js';

/** Derivations costlier than this are not started ahead: a cache file edited to ask for more must not cost more. */
const MAX_N = 1 << 20;
const MAX_R = 32;
const MAX_P = 4;

/** Where the key file of the repository at `repoUrl` is kept under `cacheDir` (the URL hashed: it is not a secret). */
export function keyFileCachePath(cacheDir: string, repoUrl: string): string {
  return join(cacheDir, 'keys', `${createHash('sha256').update(repoUrl).digest('hex').slice(0, 32)}.json`);
}

function isKeyFile(value: unknown): value is KeyFile {
  const f = value as Partial<KeyFile> | null;
  const kdf = f?.kdf;
  return (
    typeof f === 'object' &&
    f !== null &&
    f.version === 1 &&
    typeof f.data === 'string' &&
    kdf?.name === 'scrypt' &&
    typeof kdf.salt === 'string' &&
    [kdf.N, kdf.r, kdf.p].every((n) => Number.isSafeInteger(n) && n > 0) &&
    (kdf.N & (kdf.N - 1)) === 0 &&
    kdf.N <= MAX_N &&
    kdf.r <= MAX_R &&
    kdf.p <= MAX_P
  );
}

/** The kept key file, or undefined when there is none or it is not one. */
export function readCachedKeyFile(path: string): KeyFile | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  return isKeyFile(parsed) ? parsed : undefined;
}

/** Starts deriving the key of `file` for `password`; a failure surfaces when (if ever) the derivation is used. */
export function startEarlyDerivation(password: string, file: KeyFile | undefined): EarlyDerivations {
  if (!file) return new Map();
  const derivation = deriveKek(password, file.kdf);
  derivation.catch(() => undefined);
  return new Map([[kdfFingerprint(file.kdf), derivation]]);
}

/** Keeps `file` as the repository's key file (owner-only, written whole then renamed) unless `kept` is the same. */
export function rememberKeyFile(path: string, file: KeyFile, kept: KeyFile | undefined): void {
  if (kept && JSON.stringify(kept) === JSON.stringify(file)) return;
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, JSON.stringify(file), { mode: 0o600 });
    renameSync(tmp, path);
  } catch {
    // A cache: a read-only or full disk only costs the next command its head start.
    try {
      rmSync(tmp, { force: true });
    } catch {
      // not even the directory could be made
    }
  }
}
