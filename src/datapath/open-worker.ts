/**
 * The open worker thread (started by open-pool.ts through worker-threads.ts): authenticates and decrypts a blob
 * (openBlobInto), decompresses it (ZstdContext) and checks it against its ID (ContentHasher), with the same code the
 * main thread uses, so there is one implementation of each step of docs/repository-format.md §3.1. For restore it
 * also writes whole small files straight from a batch of blobs.
 */
import { closeSync, fchmodSync, fchownSync, ftruncateSync, futimesSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { ZstdContext } from './compress.js';
import { AuthenticationError, ContentHasher, ID_BYTES, openBlobInto } from './crypto.js';
import { collectYoungGarbage } from './heap-tuning.js';
import { FLAG_ZSTD } from './pack.js';
import { preallocate } from './preallocate.js';
import { CREATE_NEW, openNewSync, writeChunkSync } from './restore-writes.js';

export interface OpenWorkerData {
  encKey: Uint8Array;
  idKey: Uint8Array;
}

/** One blob to open: its sealed bytes at the start of `sealed`, its plaintext into `out`; both travel back. */
export interface OpenBlobMessage {
  seq: number;
  id: Uint8Array;
  sealed: ArrayBuffer;
  sealedLength: number;
  out: ArrayBuffer;
  flags: number;
  rawLength: number;
  /**
   * Write the plaintext (or this slice of it) into an open file at `pos` here, rather than send it back: a restore's
   * main thread then only reads packs (restorer.ts). `sparse`: all-zero 4 KiB blocks are left as holes.
   */
  write?: { fd: number; pos: number; sparse: boolean; slice?: [number, number] };
}

/** The reply to an OpenBlobMessage: the plaintext length, or why the blob cannot be opened or written. */
export interface OpenBlobReply {
  seq: number;
  sealed: ArrayBuffer;
  out: ArrayBuffer;
  length?: number;
  error?: string;
  /** The write failed (OpenBlobMessage.write): the file system's error. */
  writeError?: SmallFileIssue;
}

/**
 * One small file for restoreFiles(): its content is in the batch slab, as sealed blobs (ID then sealed bytes) or
 * inline plaintext. `parts` holds PART_FIELDS numbers per piece: offset, length, flags (-1 = plaintext), rawLength,
 * and the slice of a bundle blob the piece is (start, length; start -1 = the whole blob).
 */
export interface SmallFileJob {
  tmp: string;
  path: string;
  mode: number;
  chmod: boolean;
  chown: boolean;
  uid: number;
  gid: number;
  /** Seconds (atime and mtime). */
  mtime: number;
  parts: number[];
}

export const PART_FIELDS = 6;

/** A small file's size: the sum of its pieces' plaintext lengths (inline bytes, a bundle slice, or a whole blob). */
function plainSize(p: number[]): number {
  let size = 0;
  for (let k = 0; k < p.length; k += PART_FIELDS) size += p[k + 2] === -1 ? p[k + 1]! : p[k + 4]! >= 0 ? p[k + 5]! : p[k + 3]!;
  return size;
}

export interface SmallFileIssue {
  kind: 'fs' | 'blob';
  code?: string;
  message: string;
  /** Which piece (kind 'blob'). */
  blob?: number;
}

/** Per file: bytes written, or the error that stopped it (its temp file is removed), plus attribute issues. */
export interface SmallFileResult {
  bytes?: number;
  error?: SmallFileIssue;
  issues?: SmallFileIssue[];
}

/** A batch of small files whose blobs are in `slab`; the slab travels back with the results. */
export interface RestoreFilesMessage {
  seq: number;
  slab: ArrayBuffer;
  files: SmallFileJob[];
}

export interface RestoreFilesReply {
  seq: number;
  slab: ArrayBuffer;
  results: SmallFileResult[];
}

export type OpenWorkerMessage = OpenBlobMessage | RestoreFilesMessage;

/** Why a blob cannot be opened, as the restore reports it after "blob … in pack … is corrupted: ". */
class BlobFault extends Error {}

/** A piece of a small file that could not be opened: which one, and why. */
class PieceFault extends Error {
  constructor(
    readonly blob: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Opens blobs on one thread: decrypts into the caller's buffer (or a scratch buffer first when the blob is compressed),
 * decompresses, and checks the plaintext against the ID.
 */
class BlobOpener {
  private readonly keys: { encryption: Buffer };
  private readonly hasher: ContentHasher;
  private readonly zstd = new ZstdContext('decompress');
  private scratch = Buffer.allocUnsafe(1 << 20);

  constructor(data: OpenWorkerData) {
    this.keys = { encryption: Buffer.from(data.encKey) };
    this.hasher = new ContentHasher(Buffer.from(data.idKey));
  }

  /** Opens into `out` (room for rawLength + 1 bytes); returns the plaintext length or throws BlobFault. */
  open(id: Buffer, sealed: Buffer, flags: number, rawLength: number, out: Buffer): number {
    const compressed = (flags & FLAG_ZSTD) !== 0;
    if (compressed && this.scratch.length < sealed.length) this.scratch = Buffer.allocUnsafe(sealed.length);
    let length: number;
    try {
      length = openBlobInto(this.keys, id, sealed, compressed ? this.scratch : out);
    } catch (err) {
      if (err instanceof AuthenticationError) throw new BlobFault('failed authentication (wrong key, or the data was corrupted or tampered with)');
      if (err instanceof RangeError) throw new BlobFault('is larger than its index entry says');
      throw err;
    }
    let plain = out.subarray(0, length);
    if (compressed) {
      try {
        plain = out.subarray(0, this.zstd.decompressInto(this.scratch.subarray(0, length), out, rawLength));
      } catch (err) {
        throw new BlobFault(`cannot be decompressed: ${(err as Error).message}`);
      }
    }
    if (plain.length !== rawLength || !this.hasher.id(plain).equals(id)) throw new BlobFault('does not match its ID');
    return plain.length;
  }
}

function fsIssue(err: unknown, what?: string): SmallFileIssue {
  const e = err as { code?: string; message?: string };
  return { kind: 'fs', ...(e.code ? { code: e.code } : {}), message: (what ? `${what}: ` : '') + String(e.message ?? err).split(',')[0] };
}

/**
 * Writes the small files of restore batches: each from the batch slab to its own name when new (else to its temp
 * name, renamed into place), attributes on the open descriptor. Consecutive files of one bundle open it once.
 */
class SmallFileWriter {
  private plainScratch = Buffer.allocUnsafe(1 << 20);
  private bundlePlain = Buffer.allocUnsafe(1 << 19);
  private bundleSlab: Buffer | undefined;
  private bundleAt = -1;
  private bundleLength = 0;

  constructor(private readonly opener: BlobOpener) {}

  /** Opens the sealed blob of piece `k` (ID then sealed bytes at its offset in the slab) into `into`. */
  private openPiece(slab: Buffer, p: number[], k: number, into: Buffer): number {
    const id = slab.subarray(p[k]!, p[k]! + ID_BYTES);
    const sealed = slab.subarray(p[k]! + ID_BYTES, p[k]! + ID_BYTES + p[k + 1]!);
    try {
      return this.opener.open(id, sealed, p[k + 2]!, p[k + 3]!, into);
    } catch (err) {
      if (err instanceof BlobFault) throw new PieceFault(k / PART_FIELDS, err.message);
      throw err;
    }
  }

  /** The plaintext of piece `k`: inline bytes, a slice of a bundle blob, or a whole blob. */
  private piece(slab: Buffer, p: number[], k: number): Buffer {
    const rawLength = p[k + 3]!;
    if (p[k + 2] === -1) return slab.subarray(p[k], p[k]! + p[k + 1]!);
    if (p[k + 4]! >= 0) {
      if (this.bundleSlab !== slab || this.bundleAt !== p[k]) {
        if (this.bundlePlain.length <= rawLength) this.bundlePlain = Buffer.allocUnsafe(rawLength + 1 + (1 << 16));
        this.bundleSlab = undefined;
        this.bundleLength = this.openPiece(slab, p, k, this.bundlePlain);
        this.bundleSlab = slab;
        this.bundleAt = p[k]!;
      }
      if (p[k + 4]! + p[k + 5]! > this.bundleLength) throw new PieceFault(k / PART_FIELDS, 'is shorter than the slice a file names in it');
      return this.bundlePlain.subarray(p[k + 4], p[k + 4]! + p[k + 5]!);
    }
    if (this.plainScratch.length <= rawLength) this.plainScratch = Buffer.allocUnsafe(rawLength + 1 + (1 << 16));
    return this.plainScratch.subarray(0, this.openPiece(slab, p, k, this.plainScratch));
  }

  write(f: SmallFileJob, slab: Buffer): SmallFileResult {
    let fd: number | undefined;
    // A new file is written under its own name; one already there is replaced whole through the temporary name.
    let written = f.path;
    try {
      fd = openNewSync(f.path, f.mode & 0o777);
      if (fd === undefined) {
        written = f.tmp;
        fd = openSync(f.tmp, CREATE_NEW, f.mode & 0o777);
      }
    } catch (err) {
      return { error: fsIssue(err) };
    }
    const issues: SmallFileIssue[] = [];
    let pos = 0;
    try {
      const reserved = preallocate(fd, plainSize(f.parts));
      for (let k = 0; k < f.parts.length; k += PART_FIELDS) {
        const plain = this.piece(slab, f.parts, k);
        let done = 0;
        while (done < plain.length) done += writeSync(fd, plain, done, plain.length - done, pos + done);
        pos += plain.length;
      }
      if (pos < reserved) ftruncateSync(fd, pos);
      if (f.chown) {
        try {
          fchownSync(fd, f.uid, f.gid);
        } catch (err) {
          issues.push(fsIssue(err, `cannot restore owner ${f.uid}:${f.gid}`));
        }
      }
      if (f.chmod) {
        try {
          fchmodSync(fd, f.mode);
        } catch (err) {
          issues.push(fsIssue(err));
        }
      }
      try {
        futimesSync(fd, f.mtime, f.mtime);
      } catch (err) {
        issues.push(fsIssue(err));
      }
      closeSync(fd);
      fd = undefined;
      if (written !== f.path) renameSync(written, f.path);
      return { bytes: pos, issues };
    } catch (err) {
      if (fd !== undefined) {
        try {
          closeSync(fd);
        } catch {
          // Already failing: the first error is the one to report.
        }
      }
      try {
        unlinkSync(written);
      } catch {
        // Not created, or already gone.
      }
      const error: SmallFileIssue = err instanceof PieceFault ? { kind: 'blob', blob: err.blob, message: err.message } : fsIssue(err);
      return { error, issues };
    }
  }
}

/**
 * Decipher update() returns a fresh buffer per call, freed only when a GC runs, which a worker's small heap rarely
 * needs: a large-file restore left hundreds of MB of dead buffers here. A minor GC every 4 MB opened frees them.
 */
const GC_EVERY = 4 << 20;

export function main(data: OpenWorkerData, port: MessagePort): (msg: OpenWorkerMessage) => void {
  const opener = new BlobOpener(data);
  const writer = new SmallFileWriter(opener);
  let sinceGc = 0;
  const maybeCollect = (bytes: number): void => {
    sinceGc += bytes;
    if (sinceGc > GC_EVERY) {
      sinceGc = 0;
      collectYoungGarbage();
    }
  };
  return (msg) => {
    if ('files' in msg) {
      const slab = Buffer.from(msg.slab);
      const results = msg.files.map((f) => writer.write(f, slab));
      const bytes = msg.slab.byteLength; // before the transfer detaches it
      const reply: RestoreFilesReply = { seq: msg.seq, slab: msg.slab, results };
      port.postMessage(reply, [msg.slab]);
      maybeCollect(bytes);
      return;
    }
    const reply: OpenBlobReply = { seq: msg.seq, sealed: msg.sealed, out: msg.out };
    try {
      const out = Buffer.from(msg.out);
      reply.length = opener.open(Buffer.from(msg.id), Buffer.from(msg.sealed, 0, msg.sealedLength), msg.flags, msg.rawLength, out);
      const w = msg.write;
      if (w) {
        let plain = out.subarray(0, reply.length);
        if (w.slice) {
          if (w.slice[0] + w.slice[1] > plain.length) throw new BlobFault('is shorter than the slice a file names in it');
          plain = plain.subarray(w.slice[0], w.slice[0] + w.slice[1]);
        }
        try {
          writeChunkSync(w.fd, plain, w.pos, w.sparse);
          reply.length = plain.length;
        } catch (err) {
          reply.writeError = fsIssue(err);
        }
      }
    } catch (err) {
      if (!(err instanceof BlobFault)) throw err;
      reply.error = err.message;
    }
    port.postMessage(reply, [msg.sealed, msg.out]);
    maybeCollect(msg.rawLength);
  };
}
