/**
 * Reading one content: its index entry names the pack blob and the byte range; the range is opened with the
 * content's IV (the last 16 bytes of its hash), decompressed when the entry names a compressor (the bytes then start
 * with that compressor's header), and checked against its ID (the keyed hash of the plaintext).
 */
import { isNotFound } from '../../plugins/object-store/index.js';
import { RepositoryCorruptError } from '../errors.js';
import type { KopiaBlobStorage } from './blob-storage.js';
import { decompressWithHeader } from './compression.js';
import { ContentAuthenticationError, type ContentCipher } from './content-crypto.js';
import type { ContentHash } from './hashing.js';
import { contentHashOf, type ContentInfo, type MergedIndex } from './index.js';

/** A content the indexes do not have (or have as deleted). */
export class ContentNotFoundError extends RepositoryCorruptError {}

export interface KopiaContentsOptions {
  blobs: KopiaBlobStorage;
  index: MergedIndex;
  cipher: ContentCipher;
  /** The repository's content hash; when given, every content read is checked against its ID. */
  hash?: ContentHash;
}

export class KopiaContents {
  constructor(private readonly opts: KopiaContentsOptions) {}

  /** The live index entry of a content. */
  info(id: string): ContentInfo {
    const info = this.opts.index.get(id);
    if (!info || info.deleted) throw new ContentNotFoundError(`content ${id} is not in any index of ${this.opts.blobs.description} (missing index blob, or the content was deleted)`);
    return info;
  }

  async get(id: string, signal?: AbortSignal): Promise<Buffer> {
    const info = this.info(id);
    let sealed: Buffer;
    try {
      sealed = await this.opts.blobs.get(info.packBlobId, { offset: info.packOffset, length: info.packedLength }, signal);
    } catch (err) {
      if (isNotFound(err)) throw new RepositoryCorruptError(`pack ${info.packBlobId} holding content ${id} is missing from ${this.opts.blobs.description}`);
      throw err;
    }
    return this.open(info, sealed);
  }

  /** Opens the sealed bytes of a content (read by the caller from its pack range). */
  open(info: ContentInfo, sealed: Buffer): Buffer {
    if (sealed.length !== info.packedLength) throw new RepositoryCorruptError(`pack ${info.packBlobId} is shorter than content ${info.id} needs`);
    if (info.encryptionKeyId !== 0) throw new RepositoryCorruptError(`content ${info.id} names encryption key ${info.encryptionKeyId}; only key 0 exists`);
    const hash = contentHashOf(info.id);
    let plain: Buffer;
    try {
      plain = this.opts.cipher.open(sealed, hash.subarray(hash.length - 16));
    } catch (err) {
      if (err instanceof ContentAuthenticationError) {
        throw new RepositoryCorruptError(`content ${info.id} in pack ${info.packBlobId} at ${info.packOffset} does not authenticate: the pack is corrupted`);
      }
      throw err;
    }
    if (info.compressionHeaderId !== 0) {
      try {
        plain = decompressWithHeader(plain, info.compressionHeaderId);
      } catch (err) {
        throw new RepositoryCorruptError(`content ${info.id} cannot be decompressed: ${(err as Error).message}`);
      }
    }
    if (this.opts.hash && !this.opts.hash(plain).equals(hash)) throw new RepositoryCorruptError(`content ${info.id} does not match its ID`);
    return plain;
  }
}
