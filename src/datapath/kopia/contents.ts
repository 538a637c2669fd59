/**
 * Reading one content: its index entry names the pack blob and the byte range; the range is opened with the
 * content's IV (the last 16 bytes of its hash), decompressed when the entry names a compressor (the bytes then start
 * with that compressor's header), and, when the repository is opened with `verify`, checked against its ID (the
 * keyed hash of the plaintext; authentication alone already binds a content to its ID).
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
    const { info, sealed } = await this.readSealed(id, signal);
    return this.open(info, sealed);
  }

  /** A content's index entry and its sealed bytes, read from its pack range (opened by open() or a content worker). */
  async readSealed(id: string, signal?: AbortSignal): Promise<{ info: ContentInfo; sealed: Buffer }> {
    const info = this.info(id);
    return { info, sealed: await this.readPackRange({ pack: info.packBlobId, offset: info.packOffset, length: info.packedLength }, id, signal) };
  }

  /** One ranged read of a pack (planned by planPackReads) for contents the caller cuts out of it; `first` names one. */
  async readPackRange(read: { pack: string; offset: number; length: number }, first: string, signal?: AbortSignal): Promise<Buffer> {
    try {
      return await this.opts.blobs.get(read.pack, { offset: read.offset, length: read.length }, signal);
    } catch (err) {
      if (isNotFound(err)) throw new RepositoryCorruptError(`pack ${read.pack} holding content ${first} is missing from ${this.opts.blobs.description}`);
      throw err;
    }
  }

  /** Opens the sealed bytes of a content (read by the caller from its pack range). */
  open(info: ContentInfo, sealed: Buffer): Buffer {
    return openContent(info, sealed, this.opts.cipher, this.opts.hash);
  }
}

/**
 * Opens the sealed bytes of a content: authenticates and decrypts them with the content's IV, decompresses them when
 * the index entry names a compressor, and checks the plaintext against the ID when `hash` is given. The one
 * implementation, used on the main thread and by the content workers of a restore.
 */
export function openContent(info: ContentInfo, sealed: Buffer, cipher: ContentCipher, hash?: ContentHash): Buffer {
  if (sealed.length !== info.packedLength) throw new RepositoryCorruptError(`pack ${info.packBlobId} is shorter than content ${info.id} needs`);
  if (info.encryptionKeyId !== 0) throw new RepositoryCorruptError(`content ${info.id} names encryption key ${info.encryptionKeyId}; only key 0 exists`);
  const id = contentHashOf(info.id);
  let plain: Buffer;
  try {
    plain = cipher.open(sealed, id.subarray(id.length - 16));
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
  if (hash && !hash(plain).equals(id)) throw new RepositoryCorruptError(`content ${info.id} does not match its ID`);
  return plain;
}
