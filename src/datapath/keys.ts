/**
 * Key files (docs/repository-format.md §3.2): the master keys wrapped under a key derived from a password with
 * scrypt. Several key files may exist; any one opens the repository.
 */
import { randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { openRaw, sealRaw, type MasterKeys } from './crypto.js';

export interface ScryptParams {
  name: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
}

export interface KeyFile {
  version: 1;
  created: string;
  hostname: string;
  username: string;
  kdf: ScryptParams;
  data: string;
}

/** N=2^16, r=8: 64 MiB per guess; p=1 keeps a command's fixed cost near 0.1 s. */
export const DEFAULT_KDF = { N: 1 << 16, r: 8, p: 1 } as const;

/** What tells one derivation from another: the same password, parameters and salt always derive the same key. */
export function kdfFingerprint(kdf: ScryptParams): string {
  return `${kdf.N}:${kdf.r}:${kdf.p}:${kdf.salt}`;
}

/** Key derivations started before their key file was read (key-file-cache.ts), by kdfFingerprint. */
export type EarlyDerivations = ReadonlyMap<string, Promise<Buffer>>;

/** The key that wraps a key file's master keys, derived from the password (scrypt on the thread pool). */
export function deriveKek(password: string, kdf: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r * kdf.p + (16 << 20) };
  return new Promise((resolve, reject) =>
    scryptCb(password, Buffer.from(kdf.salt, 'base64'), 32, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function createKeyFile(keys: MasterKeys, password: string, params: { N: number; r: number; p: number } = DEFAULT_KDF): Promise<KeyFile> {
  const kdf: ScryptParams = { name: 'scrypt', ...params, salt: randomBytes(32).toString('base64') };
  const kek = await deriveKek(password, kdf);
  const plain = Buffer.from(JSON.stringify({ encryption: keys.encryption.toString('base64'), id: keys.id.toString('base64') }));
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (containers): keep "unknown"
  }
  return { version: 1, created: new Date().toISOString(), hostname: hostname(), username: user, kdf, data: sealRaw(kek, 'cairn key', plain).toString('base64') };
}

/**
 * The master keys, or undefined when this password does not open this key file. A derivation in `early` for the same
 * parameters and salt is used instead of deriving again; one that failed is derived again.
 */
export async function unwrapKeyFile(file: KeyFile, password: string, early?: EarlyDerivations): Promise<MasterKeys | undefined> {
  if (file.version !== 1 || file.kdf?.name !== 'scrypt') throw new Error(`unsupported key file version ${String(file.version)}`);
  const started = early?.get(kdfFingerprint(file.kdf));
  const kek = (started && (await started.catch(() => undefined))) || (await deriveKek(password, file.kdf));
  try {
    const plain = openRaw(kek, 'cairn key', Buffer.from(file.data, 'base64'), 'key file');
    const parsed = JSON.parse(plain.toString()) as { encryption: string; id: string };
    return { encryption: Buffer.from(parsed.encryption, 'base64'), id: Buffer.from(parsed.id, 'base64') };
  } catch {
    return undefined;
  }
}
