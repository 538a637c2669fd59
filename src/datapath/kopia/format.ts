/**
 * kopia's format blob, `kopia.repository`: JSON naming the tool and the key derivation, with the repository
 * configuration encrypted inside (`encryptedBlockFormat`). The password and the blob's `uniqueID` (the salt)
 * derive a 32-byte key with `keyAlgo` (`scrypt-65536-8-1`, kopia's default; `pbkdf2-sha256-600000`, and `pbkdf2`
 * with 786,432 iterations in older kopia); the configuration is AES-256-GCM encrypted (`encryption: AES256_GCM`)
 * with a key and additional data derived from that key by HKDF-SHA256 (salt `uniqueID`, info `AES` and `CHECKSUM`),
 * the 12-byte nonce first. The configuration holds the content format (hash, encryption, HMAC secret, master key,
 * format version, pack size, index version, epoch parameters), the object format (splitter) and the features a
 * reader must understand.
 */
import { createDecipheriv, hkdfSync, pbkdf2, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import { RepositoryCorruptError, RepositoryError, WrongPasswordError } from '../errors.js';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: { N: number; r: number; p: number; maxmem: number }) => Promise<Buffer>;
const pbkdf2Async = promisify(pbkdf2);

/** The password does not open the repository's configuration. */
export class KopiaWrongPasswordError extends WrongPasswordError {
  constructor() {
    super();
    this.message = 'the password does not open the kopia repository';
  }
}

/** The repository uses something this reader does not implement (said in the message). */
export class UnsupportedKopiaRepositoryError extends RepositoryError {}

export interface KopiaFormatBlob {
  tool: string;
  buildVersion: string;
  uniqueID: Buffer;
  keyAlgo: string;
  encryption: string;
  encryptedBlockFormat: Buffer;
}

/** The content and object format of a repository, as its configuration says. */
export interface KopiaRepositoryConfig {
  hash: string;
  encryption: string;
  ecc?: string;
  eccOverheadPercent?: number;
  hmacSecret: Buffer;
  masterKey: Buffer;
  /** Format version 1, 2 or 3. */
  version: number;
  maxPackSize: number;
  /** Index blob format: 1 or 2. */
  indexVersion: number;
  /** Index blobs are managed in epochs (`x…` blobs) instead of `n…` blobs. */
  epochs: boolean;
  splitter: string;
  requiredFeatures: { feature: string; message?: string }[];
  upgradeLocked: boolean;
}

export function parseFormatBlob(raw: Buffer): KopiaFormatBlob {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new RepositoryCorruptError(`kopia.repository is not JSON: ${(err as Error).message}`);
  }
  const bytes = (x: unknown) => (typeof x === 'string' ? Buffer.from(x, 'base64') : Buffer.alloc(0));
  const blob: KopiaFormatBlob = {
    tool: String(v.tool ?? ''),
    buildVersion: String(v.buildVersion ?? ''),
    uniqueID: bytes(v.uniqueID),
    keyAlgo: String(v.keyAlgo ?? ''),
    encryption: String(v.encryption ?? ''),
    encryptedBlockFormat: bytes(v.encryptedBlockFormat),
  };
  if (blob.uniqueID.length < 16) throw new RepositoryCorruptError('kopia.repository has no unique ID (or one shorter than 16 bytes)');
  return blob;
}

/** The 32-byte key the password and the unique ID derive with the blob's key algorithm. */
export async function deriveFormatKey(blob: KopiaFormatBlob, password: string): Promise<Buffer> {
  switch (blob.keyAlgo) {
    case 'scrypt-65536-8-1':
      // N·r·128 bytes = 64 MiB of working memory: above Node's default limit of 32 MiB.
      return scryptAsync(password, blob.uniqueID, 32, { N: 65536, r: 8, p: 1, maxmem: 256 << 20 });
    case 'pbkdf2-sha256-600000':
      return pbkdf2Async(password, blob.uniqueID, 600_000, 32, 'sha256');
    case 'pbkdf2':
      return pbkdf2Async(password, blob.uniqueID, (1 << 20) - (1 << 18), 32, 'sha256');
    default:
      throw new UnsupportedKopiaRepositoryError(`kopia.repository uses key derivation "${blob.keyAlgo}", which this reader does not know`);
  }
}

/** HKDF-SHA256 as kopia's DeriveKeyFromMasterKey: secret `key`, salt `salt`, info `purpose`. */
function hkdf(key: Buffer, salt: Buffer, purpose: string, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', key, salt, Buffer.from(purpose), length));
}

/** AES-256-GCM as kopia seals the configuration and kopia.blobcfg: nonce(12) ‖ ciphertext ‖ tag(16). */
export function openFormatSealed(sealed: Buffer, formatKey: Buffer, uniqueID: Buffer): Buffer {
  const aesKey = hkdf(formatKey, uniqueID, 'AES', 32);
  const authData = hkdf(formatKey, uniqueID, 'CHECKSUM', 32);
  if (sealed.length < 12 + 16) throw new KopiaWrongPasswordError();
  const d = createDecipheriv('aes-256-gcm', aesKey, sealed.subarray(0, 12));
  d.setAAD(authData);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  try {
    return Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
  } catch {
    // Authentication failed: with an intact blob, the only cause is a key derived from another password.
    throw new KopiaWrongPasswordError();
  }
}

/** Decrypts and reads the repository configuration; a wrong password throws WrongPasswordError. */
export async function openRepositoryConfig(blob: KopiaFormatBlob, password: string): Promise<KopiaRepositoryConfig> {
  if (blob.encryption !== 'AES256_GCM') {
    throw new UnsupportedKopiaRepositoryError(`kopia.repository is encrypted with "${blob.encryption}", which this reader does not know`);
  }
  const key = await deriveFormatKey(blob, password);
  const plain = openFormatSealed(blob.encryptedBlockFormat, key, blob.uniqueID);
  let parsed: { format?: Record<string, unknown> };
  try {
    parsed = JSON.parse(plain.toString('utf8')) as { format?: Record<string, unknown> };
  } catch (err) {
    throw new RepositoryCorruptError(`the repository configuration is not JSON: ${(err as Error).message}`);
  }
  return configFrom(parsed.format ?? {});
}

function configFrom(f: Record<string, unknown>): KopiaRepositoryConfig {
  const bytes = (x: unknown) => (typeof x === 'string' ? Buffer.from(x, 'base64') : Buffer.alloc(0));
  const version = Number(f.version ?? 1);
  // Format versions 2 and 3 resolve to index version 2 with epochs; 1 to index version 1 without (ResolveFormatVersion).
  const indexVersion = Number(f.indexVersion ?? (version >= 2 ? 2 : 1));
  const epoch = (f.epochParameters ?? {}) as { Enabled?: unknown };
  const features = Array.isArray(f.requiredFeatures) ? (f.requiredFeatures as { feature?: unknown; message?: unknown }[]) : [];
  return {
    hash: String(f.hash ?? ''),
    encryption: String(f.encryption ?? ''),
    ...(typeof f.ecc === 'string' && f.ecc ? { ecc: f.ecc } : {}),
    ...(typeof f.eccOverheadPercent === 'number' ? { eccOverheadPercent: f.eccOverheadPercent } : {}),
    hmacSecret: bytes(f.secret),
    masterKey: bytes(f.masterKey),
    version,
    maxPackSize: Number(f.maxPackSize ?? 0),
    indexVersion,
    epochs: epoch.Enabled === true,
    splitter: String(f.splitter ?? ''),
    requiredFeatures: features.map((r) => ({ feature: String(r.feature ?? ''), ...(typeof r.message === 'string' ? { message: r.message } : {}) })),
    upgradeLocked: f.upgradeLock !== undefined && f.upgradeLock !== null,
  };
}

/** Throws UnsupportedKopiaRepositoryError for anything in the configuration this reader cannot read correctly. */
export function checkSupported(config: KopiaRepositoryConfig): void {
  if (config.version < 1 || config.version > 3) throw new UnsupportedKopiaRepositoryError(`kopia repository format version ${config.version} is not supported (1 to 3 are)`);
  if (config.indexVersion !== 1 && config.indexVersion !== 2) throw new UnsupportedKopiaRepositoryError(`kopia index version ${config.indexVersion} is not supported (1 and 2 are)`);
  if (config.ecc && (config.eccOverheadPercent ?? 0) > 0) {
    throw new UnsupportedKopiaRepositoryError(`the kopia repository uses error correction (${config.ecc}, ${config.eccOverheadPercent}%), which this reader does not implement`);
  }
  if (config.requiredFeatures.length) {
    throw new UnsupportedKopiaRepositoryError(
      `the kopia repository requires features this reader does not know: ${config.requiredFeatures.map((r) => r.feature + (r.message ? ` (${r.message})` : '')).join(', ')}`,
    );
  }
  if (config.upgradeLocked) throw new UnsupportedKopiaRepositoryError('the kopia repository is being upgraded (an upgrade lock is held); try again when the upgrade is done');
  if (!config.masterKey.length) throw new UnsupportedKopiaRepositoryError('the kopia repository has no master key (unencrypted repositories are not supported)');
}
