/**
 * The repository's cryptography (docs/repository-format.md §3): keyed BLAKE3 content IDs, AES-256-GCM sealing with
 * per-blob and per-kind derived keys.
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, randomFillSync, type KeyObject } from 'node:crypto';
import { Blake3Hasher } from './blake3.js';

export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;
export const SEAL_OVERHEAD = NONCE_BYTES + TAG_BYTES;
export const ID_BYTES = 32;

/** The two master keys of a repository; never leave memory unencrypted. */
export interface MasterKeys {
  encryption: Buffer;
  id: Buffer;
}

export type FileKind = 'config' | 'index' | 'snapshot' | 'lock' | 'packheader';

export class AuthenticationError extends Error {
  constructor(what: string) {
    super(`${what} failed authentication (wrong key, or the data was corrupted or tampered with)`);
    this.name = 'AuthenticationError';
  }
}

export function newMasterKeys(): MasterKeys {
  return { encryption: randomBytes(32), id: randomBytes(32) };
}

/**
 * Computes keyed content IDs. One instance per thread; not re-entrant. One keyed hasher is reset and reused: creating
 * a keyed hasher per chunk costs more than hashing a small file.
 */
export class ContentHasher {
  private readonly hasher: Blake3Hasher;
  constructor(idKey: Buffer) {
    this.hasher = Blake3Hasher.newKeyed(idKey);
  }
  id(data: Uint8Array): Buffer {
    const h = this.hasher;
    h.reset();
    h.update(data);
    return h.digestBuffer();
  }
}

/**
 * Node 24 spends ~10 µs per createHmac/createCipheriv call validating a Buffer key, against ~1 µs for a KeyObject, and
 * small files mean one key derivation and one cipher per blob: keys are turned into KeyObjects once.
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObject(key: Buffer): KeyObject {
  let k = keyObjects.get(key);
  if (!k) keyObjects.set(key, (k = createSecretKey(key)));
  return k;
}

/** Unkeyed BLAKE3 of whole objects (pack and index names). */
export function plainHash(parts: readonly Uint8Array[]): Buffer {
  const h = new Blake3Hasher();
  for (const p of parts) h.update(p);
  return h.digestBuffer();
}

const SLICE = 64 * 1024;

function sealWith(key: Buffer | KeyObject, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(NONCE_BYTES + plaintext.length + TAG_BYTES);
  sealInto(key, aad, plaintext, out, 0);
  return out;
}

/** Seals into out[start…]; returns the sealed length (plaintext + 28). */
function sealInto(key: Buffer | KeyObject, aad: Uint8Array, plaintext: Uint8Array, out: Buffer, start: number): number {
  randomFillSync(out, start, NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key instanceof Buffer ? keyObject(key) : key, out.subarray(start, start + NONCE_BYTES));
  cipher.setAAD(aad);
  let at = start + NONCE_BYTES;
  // 64 KiB slices: node allocates an output Buffer per update(), and that was measured fastest at this size on Node 24.
  for (let i = 0; i < plaintext.length; i += SLICE) {
    const part = cipher.update(plaintext.subarray(i, Math.min(plaintext.length, i + SLICE)));
    part.copy(out, at);
    at += part.length;
  }
  const fin = cipher.final();
  fin.copy(out, at);
  at += fin.length;
  cipher.getAuthTag().copy(out, at);
  return at + TAG_BYTES - start;
}

function openWith(key: Buffer | KeyObject, aad: Uint8Array, sealed: Uint8Array, what: string): Buffer {
  if (sealed.length < SEAL_OVERHEAD) throw new AuthenticationError(what);
  const out = Buffer.allocUnsafe(sealed.length - SEAL_OVERHEAD);
  openInto(key, aad, sealed, out, what);
  return out;
}

/** Opens into out[0…]; returns the plaintext length (sealed length - 28). */
function openInto(key: Buffer | KeyObject, aad: Uint8Array, sealed: Uint8Array, out: Buffer, what: string): number {
  if (sealed.length < SEAL_OVERHEAD) throw new AuthenticationError(what);
  const body = sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES);
  if (body.length > out.length) throw new RangeError(`${what} is larger than its index entry says`);
  const decipher = createDecipheriv('aes-256-gcm', key instanceof Buffer ? keyObject(key) : key, sealed.subarray(0, NONCE_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  let at = 0;
  try {
    for (let i = 0; i < body.length; i += SLICE) {
      const part = decipher.update(body.subarray(i, Math.min(body.length, i + SLICE)));
      part.copy(out, at);
      at += part.length;
    }
    decipher.final();
  } catch {
    throw new AuthenticationError(what);
  }
  return at;
}

const BLOB_KEY_PREFIX = Buffer.from('cairn blob ');

/** The per-blob key, HMAC-SHA-256(encryption key, "cairn blob " || ID), as a KeyObject ready for the cipher. */
export function blobKey(keys: Pick<MasterKeys, 'encryption'>, id: Uint8Array): KeyObject {
  return createSecretKey(createHmac('sha256', keyObject(keys.encryption)).update(BLOB_KEY_PREFIX).update(id).digest());
}

const fileKeyCache = new WeakMap<MasterKeys, Map<FileKind, Buffer>>();
export function fileKey(keys: MasterKeys, kind: FileKind): Buffer {
  let m = fileKeyCache.get(keys);
  if (!m) fileKeyCache.set(keys, (m = new Map()));
  let k = m.get(kind);
  if (!k) m.set(kind, (k = createHmac('sha256', keys.encryption).update(`cairn file ${kind}`).digest()));
  return k;
}

export function sealBlob(keys: MasterKeys, id: Buffer, plaintext: Uint8Array): Buffer {
  return sealWith(blobKey(keys, id), id, plaintext);
}

/** Seals a blob straight into a pack buffer; returns the sealed length. */
export function sealBlobInto(keys: Pick<MasterKeys, 'encryption'>, id: Uint8Array, plaintext: Uint8Array, out: Buffer, start: number): number {
  return sealInto(blobKey(keys, id), id, plaintext, out, start);
}

export function openBlob(keys: MasterKeys, id: Buffer, sealed: Uint8Array): Buffer {
  return openWith(blobKey(keys, id), id, sealed, blobName(id));
}

/** Opens a blob into `out` (at least its plaintext length); returns the plaintext length. */
export function openBlobInto(keys: Pick<MasterKeys, 'encryption'>, id: Uint8Array, sealed: Uint8Array, out: Buffer): number {
  return openInto(blobKey(keys, id), id, sealed, out, blobName(id));
}

function blobName(id: Uint8Array): string {
  return `blob ${Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex').slice(0, 16)}`;
}

export function sealFile(keys: MasterKeys, kind: FileKind, plaintext: Uint8Array): Buffer {
  return sealWith(fileKey(keys, kind), Buffer.from(kind), plaintext);
}

export function openFile(keys: MasterKeys, kind: FileKind, sealed: Uint8Array, name: string): Buffer {
  return openWith(fileKey(keys, kind), Buffer.from(kind), sealed, name);
}

/** Seal/open with an explicit key (key files). */
export function sealRaw(key: Buffer, aad: string, plaintext: Uint8Array): Buffer {
  return sealWith(key, Buffer.from(aad), plaintext);
}
export function openRaw(key: Buffer, aad: string, sealed: Uint8Array, what: string): Buffer {
  return openWith(key, Buffer.from(aad), sealed, what);
}
