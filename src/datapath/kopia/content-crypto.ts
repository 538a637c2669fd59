/**
 * How kopia seals each content (and each index blob): an AEAD whose key is per content. The repository's master key
 * gives a key-derivation secret by HKDF-SHA256 (salt `"encryption"`, no info); a content's key is
 * HMAC-SHA256(secret, IV), where the IV is the last 16 bytes of the content's hash (of an index blob: the last 32 hex
 * digits of its blob ID). The sealed bytes are nonce(12) ‖ ciphertext ‖ tag(16), with the IV as additional data.
 * `AES256-GCM-HMAC-SHA256` (kopia's default and Velero's) uses AES-256-GCM, `CHACHA20-POLY1305-HMAC-SHA256`
 * ChaCha20-Poly1305; both authenticate, so a changed byte or a content under another ID fails to open.
 */
import { createDecipheriv, createHmac, createSecretKey, hkdfSync, type CipherGCMTypes } from 'node:crypto';
import { UnsupportedKopiaRepositoryError } from './format.js';

const NONCE = 12;
const TAG = 16;

export class ContentAuthenticationError extends Error {}

export interface ContentCipher {
  readonly algorithm: string;
  /** Opens sealed bytes with the IV; throws ContentAuthenticationError when they do not authenticate. */
  open(sealed: Buffer, iv: Buffer): Buffer;
}

const CIPHERS: Record<string, CipherGCMTypes | 'chacha20-poly1305'> = {
  'AES256-GCM-HMAC-SHA256': 'aes-256-gcm',
  'CHACHA20-POLY1305-HMAC-SHA256': 'chacha20-poly1305',
};

export function contentCipher(algorithm: string, masterKey: Buffer): ContentCipher {
  const cipher = CIPHERS[algorithm];
  if (!cipher) {
    throw new UnsupportedKopiaRepositoryError(`the kopia repository encrypts contents with "${algorithm}"; this reader knows ${Object.keys(CIPHERS).join(' and ')}`);
  }
  // A key object made once: made from bytes, it would be imported again for every content.
  const secret = createSecretKey(Buffer.from(hkdfSync('sha256', masterKey, Buffer.from('encryption'), Buffer.alloc(0), 32)));
  return {
    algorithm,
    open(sealed, iv) {
      if (sealed.length < NONCE + TAG) throw new ContentAuthenticationError(`sealed content of ${sealed.length} bytes is too short`);
      const key = createHmac('sha256', secret).update(iv).digest();
      const d = createDecipheriv(cipher as CipherGCMTypes, key, sealed.subarray(0, NONCE), { authTagLength: TAG });
      d.setAAD(iv);
      d.setAuthTag(sealed.subarray(sealed.length - TAG));
      try {
        const plain = d.update(sealed.subarray(NONCE, sealed.length - TAG));
        // An AEAD's final() only checks the tag (it returns no bytes), so the plaintext needs no second copy.
        d.final();
        return plain;
      } catch {
        throw new ContentAuthenticationError('content does not authenticate');
      }
    },
  };
}

/** The IV of an index (or other encrypted) blob: the last 32 hex digits of its ID, before any `-suffix`. */
export function blobIv(blobId: string): Buffer {
  const base = blobId.split('-')[0] ?? '';
  const hex = base.slice(-32);
  if (hex.length < 32 || !/^[0-9a-f]+$/.test(hex)) throw new Error(`blob ID ${blobId} has no 16-byte hash to derive its IV from`);
  return Buffer.from(hex, 'hex');
}
