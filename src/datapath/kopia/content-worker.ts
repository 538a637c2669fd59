/**
 * The content worker thread of a kopia restore (started by content-pool.ts through worker-threads.ts): opens a
 * content read from its pack (openContent: authenticate, decrypt, decompress, check against the ID), undoes the
 * object's own compression when its ID says so, checks the length the object's index gives, and writes the bytes:
 * a piece of a large file at its offset in a file the main thread holds open, or a whole small file (most files of a
 * volume are one content): created under its own name (under a temporary name renamed into place when something is
 * already there), written, given its owner, mode and times, all on this thread. The main thread walks the directories and reads the packs, so a restore uses
 * every core for the crypto, the writes and the file-system calls.
 */
import { closeSync, ftruncateSync, openSync, renameSync, unlinkSync, type PathLike } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { RepositoryCorruptError } from '../errors.js';
import { applyAttributes, type RecordedAttributes } from '../restore-ledger.js';
import { CREATE_NEW, openNewSync, writeChunkSync } from '../restore-writes.js';
import { decompressWithHeader } from './compression.js';
import { contentCipher } from './content-crypto.js';
import { openContent } from './contents.js';
import { contentHash } from './hashing.js';
import type { ContentInfo } from './index.js';

export interface ContentWorkerData {
  /** The repository's encryption algorithm and master key (the worker derives the content keys as the main thread does). */
  encryption: string;
  masterKey: Uint8Array;
  /** The hash algorithm and HMAC secret when every content is checked against its ID. */
  hash?: string;
  hmacSecret?: Uint8Array;
}

/** A content's sealed bytes and what its plaintext must be. */
export interface SealedPiece {
  info: ContentInfo;
  sealed: ArrayBuffer;
  sealedLength: number;
  /** The object's ID starts with `Z`: its bytes carry a compression header of their own. */
  objectCompressed: boolean;
  /** The length the object's index gives the piece (-1 when it has none). */
  expectedLength: number;
}

/** One piece of a large file, written at `position` of `fd`. */
export interface WritePieceMessage extends SealedPiece {
  kind: 'piece';
  seq: number;
  fd: number;
  position: number;
  /** Leave all-zero 4 KiB blocks as holes. */
  sparse: boolean;
}

/** A whole file of one piece: created at `path` with `createMode` (at `tmp`, then renamed, when `path` exists), written, attributes set. */
export interface WholeFile {
  tmp: string;
  path: string;
  createMode: number;
  /** The mode given at creation is the recorded one (the umask took nothing away). */
  modeIsSet: boolean;
  ownership: boolean;
  attributes: RecordedAttributes;
  /** The size the directory entry gives the file. */
  size: number;
  sparse: boolean;
}

export interface WriteFileMessage extends SealedPiece, WholeFile {
  kind: 'file';
  seq: number;
}

export type ContentWorkerMessage = WritePieceMessage | WriteFileMessage;

/** A failure: `corrupt` when the repository is at fault, `code` for a file-system error. */
export interface ContentWorkerError {
  message: string;
  corrupt: boolean;
  code?: string;
}

/** What became of a piece or file: the bytes written (and a file's attribute failures), or why it failed. */
export interface WriteContentReply {
  seq: number;
  written?: number;
  issues?: ContentWorkerError[];
  error?: ContentWorkerError;
}

function describe(err: unknown): ContentWorkerError {
  const e = err as NodeJS.ErrnoException;
  return { message: e.message ?? String(err), corrupt: err instanceof RepositoryCorruptError, ...(e.code ? { code: e.code } : {}) };
}

function removeQuietly(path: PathLike): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone, or the directory is: nothing to clean.
  }
}

export function main(data: ContentWorkerData, port: MessagePort): (message: ContentWorkerMessage) => void {
  const cipher = contentCipher(data.encryption, Buffer.from(data.masterKey));
  const hash = data.hash && data.hmacSecret ? contentHash(data.hash, Buffer.from(data.hmacSecret)) : undefined;
  const plaintext = (m: SealedPiece): Buffer => {
    let plain = openContent(m.info, Buffer.from(m.sealed, 0, m.sealedLength), cipher, hash);
    if (m.objectCompressed) plain = decompressWithHeader(plain);
    if (m.expectedLength >= 0 && plain.length !== m.expectedLength) {
      throw new RepositoryCorruptError(`content ${m.info.id} has ${plain.length} bytes, its object's index says ${m.expectedLength}`);
    }
    return plain;
  };
  const writeFile = (m: WriteFileMessage): WriteContentReply => {
    const plain = plaintext(m);
    if (plain.length !== m.size) throw new RepositoryCorruptError(`${m.path} restored ${plain.length} bytes, its directory entry says ${m.size}`);
    // A new file is written under its own name; one already there is replaced whole through the temporary name.
    let written = m.path;
    let fd = openNewSync(m.path, m.createMode);
    if (fd === undefined) {
      written = m.tmp;
      fd = openSync(m.tmp, CREATE_NEW, m.createMode);
    }
    let open = true;
    let renamed = false;
    try {
      writeChunkSync(fd, plain, 0, m.sparse);
      // Zero blocks at the end were not written: the size comes from the truncate.
      if (m.sparse) ftruncateSync(fd, plain.length);
      const issues: ContentWorkerError[] = [];
      applyAttributes({ abs: written, fd, modeIsSet: m.modeIsSet }, m.attributes, m.ownership, (err) => issues.push(describe(err)));
      open = false;
      closeSync(fd);
      if (written !== m.path) renameSync(written, m.path);
      renamed = true;
      return { seq: m.seq, written: plain.length, ...(issues.length ? { issues } : {}) };
    } finally {
      // Never close twice: the number may belong to another thread's file by then.
      if (open) closeSync(fd);
      if (!renamed) removeQuietly(written);
    }
  };
  return (m) => {
    let reply: WriteContentReply;
    try {
      if (m.kind === 'file') reply = writeFile(m);
      else {
        const plain = plaintext(m);
        writeChunkSync(m.fd, plain, m.position, m.sparse);
        reply = { seq: m.seq, written: plain.length };
      }
    } catch (err) {
      reply = { seq: m.seq, error: describe(err) };
    }
    port.postMessage(reply);
  };
}
