/**
 * kopia's content hashes, keyed with the repository's HMAC secret: a content's ID is the hash of its plaintext, so
 * a content read can be checked against its ID (the reader's `verify` option). BLAKE2B-256-128 (kopia's default and
 * Velero's) is keyed BLAKE2b with a 32-byte output cut to 16; BLAKE2S-128/-256 and BLAKE2B-256 likewise; HMAC-SHA256(-128), HMAC-SHA224 and
 * HMAC-SHA3-224/-256 are HMACs cut to their size; BLAKE3-256(-128) is keyed BLAKE3 (a secret shorter than 32 bytes
 * becomes a key by BLAKE3's derive-key mode, context "kopia blake3 derived key v1"). BLAKE2 and BLAKE3 run in the
 * native module cairn's own data path uses.
 */
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { Blake3Hasher, blake3ModulePath } from '../blake3.js';
import { UnsupportedKopiaRepositoryError } from './format.js';

export type ContentHash = (data: Buffer) => Buffer;

interface Blake2Param {
  hashLength(n: number): void;
  key(k: Buffer): void;
}
interface Blake2Hasher {
  update(b: Buffer): void;
  digestBuffer(): Buffer;
}
interface Blake2Module {
  Blake2BParam: new () => Blake2Param;
  Blake2SParam: new () => Blake2Param;
  Blake2BHasher: { withParams(p: Blake2Param): Blake2Hasher };
  Blake2SHasher: { withParams(p: Blake2Param): Blake2Hasher };
  Blake3Hasher: { deriveKey(context: string, material: Buffer): Buffer };
}

const native = createRequire(import.meta.url)(blake3ModulePath()) as Blake2Module;

function blake2(kind: 'b' | 's', outLen: number, truncate: number, key: Buffer): ContentHash {
  const Param = kind === 'b' ? native.Blake2BParam : native.Blake2SParam;
  const Hasher = kind === 'b' ? native.Blake2BHasher : native.Blake2SHasher;
  return (data) => {
    const p = new Param();
    p.hashLength(outLen);
    p.key(key);
    const h = Hasher.withParams(p);
    h.update(data);
    return h.digestBuffer().subarray(0, truncate);
  };
}

function hmac(algorithm: string, truncate: number, key: Buffer): ContentHash {
  return (data) => createHmac(algorithm, key).update(data).digest().subarray(0, truncate);
}

function blake3(truncate: number, secret: Buffer): ContentHash {
  const key = secret.length < 32 ? native.Blake3Hasher.deriveKey('kopia blake3 derived key v1', secret) : secret.subarray(0, 32);
  return (data) => Blake3Hasher.newKeyed(key).update(data).digestBuffer().subarray(0, truncate);
}

const HASHES: Record<string, (key: Buffer) => ContentHash> = {
  'BLAKE2B-256-128': (k) => blake2('b', 32, 16, k),
  'BLAKE2B-256': (k) => blake2('b', 32, 32, k),
  'BLAKE2S-128': (k) => blake2('s', 16, 16, k),
  'BLAKE2S-256': (k) => blake2('s', 32, 32, k),
  'HMAC-SHA256': (k) => hmac('sha256', 32, k),
  'HMAC-SHA256-128': (k) => hmac('sha256', 16, k),
  'HMAC-SHA224': (k) => hmac('sha224', 28, k),
  'HMAC-SHA3-224': (k) => hmac('sha3-224', 28, k),
  'HMAC-SHA3-256': (k) => hmac('sha3-256', 32, k),
  'BLAKE3-256': (k) => blake3(32, k),
  'BLAKE3-256-128': (k) => blake3(16, k),
};

export function contentHash(algorithm: string, hmacSecret: Buffer): ContentHash {
  const make = HASHES[algorithm];
  if (!make) throw new UnsupportedKopiaRepositoryError(`the kopia repository hashes contents with "${algorithm}", which this reader does not know`);
  return make(hmacSecret);
}
