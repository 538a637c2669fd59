/**
 * Worker threads that open blobs for restore and check: authenticate and decrypt (AES-256-GCM with the per-blob key),
 * decompress, and recompute the keyed BLAKE3 ID. The main thread only reads packs and writes files. Like seal-pool,
 * the worker is plain JavaScript from a string and implements docs/repository-format.md §3.1 as crypto.ts does; the
 * restore round-trip tests compare the results byte for byte.
 */
import { blake3ModulePath } from './blake3.js';
import { startWorker } from './worker-threads.js';
import type { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createDecipheriv, createHmac, createSecretKey } = require('node:crypto');
const zlib = require('node:zlib');
const { Blake3Hasher } = require(workerData.blakePath);
// KeyObjects: Node 24 validates a Buffer key for ~10 µs per createHmac/createDecipheriv, a KeyObject for ~1 µs.
const encKey = createSecretKey(Buffer.from(workerData.encKey));
const hasher = Blake3Hasher.newKeyed(Buffer.from(workerData.idKey));
const prefix = Buffer.from('cairn blob ');
const SLICE = 65536;
// One zstd context for every blob, as compress.ts ZstdContext does (see there why and how).
let engine;
function zstdEngine() {
  if (engine === undefined || (engine && engine.destroyed)) {
    const e = zlib.createZstdDecompress();
    e.on('error', () => undefined);
    engine = e._handle && typeof e._handle.writeSync === 'function' && e._writeState instanceof Uint32Array ? e : null;
  }
  return engine;
}
// Decompresses frame into out; returns the plaintext length, or an error message.
function decompressInto(frame, out, rawLength) {
  const e = zstdEngine();
  if (!e || out.length <= rawLength) {
    const unpacked = zlib.zstdDecompressSync(frame, { maxOutputLength: Math.max(rawLength, 1) });
    if (unpacked.length > out.length) return 'does not match its ID';
    return unpacked.copy(out, 0);
  }
  // One spare byte: a frame holding more than rawLength bytes fills it and is caught by the length check.
  e._handle.writeSync(e._finishFlushFlag, frame, 0, frame.length, out, 0, rawLength + 1);
  if (e.destroyed) throw new Error('invalid zstd data');
  const availOut = e._writeState[0];
  const availIn = e._writeState[1];
  const n = rawLength + 1 - availOut;
  // After a whole frame of the expected length the context is ready for the next one; else a clean session.
  if (availIn !== 0 || n !== rawLength) e._handle.reset();
  if (availIn !== 0) return 'does not match its ID';
  return n;
}
let scratch = Buffer.allocUnsafe(1 << 20);
// Decrypts into out (a transferred buffer of the caller's), or into a scratch buffer first when compressed.
function open(id, sealed, flags, rawLength, out) {
  const key = createSecretKey(createHmac('sha256', encKey).update(prefix).update(id).digest());
  const d = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  d.setAAD(id);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  const body = sealed.subarray(12, sealed.length - 16);
  const compressed = (flags & 1) !== 0;
  if (compressed && scratch.length < body.length) scratch = Buffer.allocUnsafe(body.length);
  const dec = compressed ? scratch : out;
  if (body.length > dec.length) return { error: 'is larger than its index entry says' };
  let at = 0;
  try {
    for (let i = 0; i < body.length; i += SLICE) {
      const part = d.update(body.subarray(i, Math.min(body.length, i + SLICE)));
      part.copy(dec, at);
      at += part.length;
    }
    d.final();
  } catch {
    return { error: 'failed authentication (wrong key, or the data was corrupted or tampered with)' };
  }
  let plain = dec.subarray(0, at);
  if (compressed) {
    try {
      const n = decompressInto(plain, out, rawLength);
      if (typeof n === 'string') return { error: n };
      plain = out.subarray(0, n);
    } catch (err) {
      return { error: 'cannot be decompressed: ' + err.message };
    }
  }
  if (plain.length !== rawLength) return { error: 'does not match its ID' };
  hasher.reset();
  hasher.update(plain);
  if (!hasher.digestBuffer().equals(id)) return { error: 'does not match its ID' };
  return { length: plain.length };
}
const fs = require('node:fs');
const CREATE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL;
let plainScratch = Buffer.allocUnsafe(1 << 20);
function fsError(err, what) {
  return { kind: 'fs', code: err.code, message: (what ? what + ': ' : '') + String(err.message).split(',')[0] };
}
// Writes one small file from the batch slab: to its temp name, attributes on the open descriptor, renamed into place.
// parts: 6 numbers per piece: offset, length, flags, rawLength, slice start, slice length; flags -1 = plaintext
// (inline content), else the 32-byte ID at offset followed by the sealed blob. A slice start of -1 = the whole blob;
// else the piece is that slice of a bundle, and consecutive files of a bundle open it once (bundleAt).
let bundlePlain = Buffer.allocUnsafe(1 << 19);
let bundleSlab;
let bundleAt = -1;
let bundleLength = 0;
function restoreFile(f, slab) {
  let fd;
  try {
    fd = fs.openSync(f.tmp, CREATE, f.mode & 0o777);
  } catch (err) {
    return { error: fsError(err) };
  }
  const issues = [];
  let pos = 0;
  try {
    const p = f.parts;
    for (let k = 0; k < p.length; k += 6) {
      let plain;
      if (p[k + 2] === -1) {
        plain = slab.subarray(p[k], p[k] + p[k + 1]);
      } else if (p[k + 4] >= 0) {
        if (bundleSlab !== slab || bundleAt !== p[k]) {
          const rawLength = p[k + 3];
          if (bundlePlain.length <= rawLength) bundlePlain = Buffer.allocUnsafe(rawLength + 1 + (1 << 16));
          bundleSlab = undefined;
          const id = slab.subarray(p[k], p[k] + 32);
          const r = open(id, slab.subarray(p[k] + 32, p[k] + 32 + p[k + 1]), p[k + 2], rawLength, bundlePlain);
          if (r.error) throw { blob: k / 6, message: r.error };
          bundleSlab = slab;
          bundleAt = p[k];
          bundleLength = r.length;
        }
        if (p[k + 4] + p[k + 5] > bundleLength) throw { blob: k / 6, message: 'is shorter than the slice a file names in it' };
        plain = bundlePlain.subarray(p[k + 4], p[k + 4] + p[k + 5]);
      } else {
        const rawLength = p[k + 3];
        if (plainScratch.length <= rawLength) plainScratch = Buffer.allocUnsafe(rawLength + 1 + (1 << 16));
        const id = slab.subarray(p[k], p[k] + 32);
        const r = open(id, slab.subarray(p[k] + 32, p[k] + 32 + p[k + 1]), p[k + 2], rawLength, plainScratch);
        if (r.error) throw { blob: k / 6, message: r.error };
        plain = plainScratch.subarray(0, r.length);
      }
      let done = 0;
      while (done < plain.length) done += fs.writeSync(fd, plain, done, plain.length - done, pos + done);
      pos += plain.length;
    }
    if (f.chown) {
      try {
        fs.fchownSync(fd, f.uid, f.gid);
      } catch (err) {
        issues.push(fsError(err, 'cannot restore owner ' + f.uid + ':' + f.gid));
      }
    }
    if (f.chmod) {
      try {
        fs.fchmodSync(fd, f.mode);
      } catch (err) {
        issues.push(fsError(err));
      }
    }
    try {
      fs.futimesSync(fd, f.mtime, f.mtime);
    } catch (err) {
      issues.push(fsError(err));
    }
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(f.tmp, f.path);
    return { bytes: pos, issues };
  } catch (err) {
    if (fd !== undefined) {
      try { fs.closeSync(fd); } catch {}
    }
    try { fs.unlinkSync(f.tmp); } catch {}
    return { error: err && err.blob !== undefined ? { kind: 'blob', blob: err.blob, message: err.message } : fsError(err), issues };
  }
}
// Decipher update() returns a fresh buffer per call, freed only when a GC runs, which this small heap rarely needs:
// a large-file restore left hundreds of MB of dead buffers here. A minor GC every 4 MB opened frees them (see
// seal-pool.ts; --expose-gc set at run time exposes gc to new contexts only, hence vm).
require('node:v8').setFlagsFromString('--expose-gc');
const collectGarbage = require('node:vm').runInNewContext('gc');
const GC_EVERY = 4 << 20;
let sinceGc = 0;
function maybeCollect(bytes) {
  sinceGc += bytes;
  if (sinceGc > GC_EVERY) { sinceGc = 0; collectGarbage({ type: 'minor' }); }
}
parentPort.on('message', (msg) => {
  if (msg.files) {
    const slab = Buffer.from(msg.slab);
    const results = [];
    for (const f of msg.files) results.push(restoreFile(f, slab));
    const bytes = msg.slab.byteLength; // before the transfer detaches it
    parentPort.postMessage({ seq: msg.seq, slab: msg.slab, results }, [msg.slab]);
    maybeCollect(bytes);
    return;
  }
  const sealed = Buffer.from(msg.sealed, 0, msg.sealedLength);
  const out = Buffer.from(msg.out);
  const r = open(Buffer.from(msg.id), sealed, msg.flags, msg.rawLength, out);
  parentPort.postMessage({ seq: msg.seq, sealed: msg.sealed, out: msg.out, ...r }, [msg.sealed, msg.out]);
  maybeCollect(msg.rawLength);
});
`;

export class BlobOpenError extends Error {}

/**
 * One small file for restoreFiles(): its content is in the batch slab, as sealed blobs (ID then sealed bytes) or
 * inline plaintext. `parts` holds 6 numbers per piece: offset, length, flags (-1 = plaintext), rawLength, and the
 * slice of a bundle blob the piece is (start, length; start -1 = the whole blob).
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

/** A blob's plaintext in a pooled buffer; call release() once it is written out. */
export interface BlobLease {
  data: Buffer;
  release(): void;
}

/** Large buffers kept for reuse (each up to the largest chunk plus a little). */
const BIG_KEPT = 6;

/**
 * Buffers for sealed input and plaintext output travel to the worker and back (transferred, not copied) and are
 * reused: memory stays flat however much is restored. Blobs larger than the slab get one-off buffers.
 */
export class OpenPool {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, { resolve: (b: BlobLease) => void; reject: (e: unknown) => void; worker: number }>();
  private readonly pendingFiles = new Map<number, { resolve: (r: { results: SmallFileResult[]; slab: ArrayBuffer }) => void; reject: (e: unknown) => void; worker: number; dirs: string[] }>();
  /** Directories with small-file batches in flight: the worker writing into each, and how many of its batches. */
  private readonly dirWorkers = new Map<string, { worker: number; batches: number }>();
  private readonly free: ArrayBuffer[] = [];
  private readonly bigFree: ArrayBuffer[] = [];
  private seq = 0;
  /** Size of the buffers for blobs above the slab size (up to the largest chunk); 0 = one-offs. */
  private readonly bigSize: number;

  constructor(
    keys: { encryption: Buffer; id: Buffer },
    size: number,
    private readonly slabSize: number,
    maxBlob = 0,
  ) {
    this.bigSize = maxBlob > slabSize ? maxBlob + 64 * 1024 : 0;
    const blakePath = blake3ModulePath();
    for (let i = 0; i < size; i++) {
      const w = startWorker(WORKER_SOURCE, { encKey: Uint8Array.from(keys.encryption), idKey: Uint8Array.from(keys.id), blakePath });
      w.on('message', (msg: { seq: number; sealed: ArrayBuffer; out: ArrayBuffer; length?: number; error?: string; slab?: ArrayBuffer; results?: SmallFileResult[] }) => {
        if (msg.results) {
          const f = this.pendingFiles.get(msg.seq);
          if (!f) return;
          this.pendingFiles.delete(msg.seq);
          this.busy[f.worker]!--;
          this.leaveDirs(f.dirs);
          f.resolve({ results: msg.results, slab: msg.slab! });
          return;
        }
        const p = this.pending.get(msg.seq);
        if (!p) return;
        this.pending.delete(msg.seq);
        this.busy[p.worker]!--;
        this.give(msg.sealed);
        if (msg.length === undefined) {
          this.give(msg.out);
          p.reject(new BlobOpenError(msg.error ?? 'failed'));
          return;
        }
        let released = false;
        p.resolve({
          data: Buffer.from(msg.out, 0, msg.length),
          release: () => {
            if (!released) this.give(msg.out);
            released = true;
          },
        });
      });
      w.on('error', (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        for (const p of this.pendingFiles.values()) p.reject(err);
        this.pendingFiles.clear();
        this.dirWorkers.clear();
      });
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  private give(buf: ArrayBuffer): void {
    if (buf.byteLength === this.slabSize && this.free.length < 16) this.free.push(buf);
    else if (buf.byteLength === this.bigSize && this.bigFree.length < BIG_KEPT) this.bigFree.push(buf);
  }

  /** A buffer of at least `size` bytes to read sealed bytes into (hand it to open()). */
  take(size: number): Buffer {
    // Chunks above the slab size are a few percent of random data but, left to the GC, their buffers made a large-file
    // restore's RSS swing by hundreds of MB: a few buffers of the largest chunk size are reused too.
    if (size > this.slabSize && size <= this.bigSize) return Buffer.from(this.bigFree.pop() ?? new ArrayBuffer(this.bigSize));
    if (size > this.slabSize) return Buffer.from(new ArrayBuffer(size));
    return Buffer.from(this.free.pop() ?? new ArrayBuffer(this.slabSize));
  }

  /** Opens a sealed blob held at the start of `buffer` (from take(); it is transferred). */
  open(id: Buffer, buffer: Buffer, sealedLength: number, flags: number, rawLength: number): Promise<BlobLease> {
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    this.busy[w]!++;
    const seq = ++this.seq;
    const out = this.take(rawLength).buffer as ArrayBuffer;
    const sealed = buffer.buffer as ArrayBuffer;
    return new Promise<BlobLease>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w });
      this.workers[w]!.postMessage({ seq, id: Uint8Array.from(id), sealed, sealedLength, out, flags, rawLength }, [sealed, out]);
    });
  }

  private leastBusy(): number {
    let w = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[w]!) w = i;
    return w;
  }

  /**
   * Restores whole small files on a worker: open (authenticate, decompress, check the ID), create the temp file, write,
   * owner/mode/times on the descriptor, rename into place. The slab is transferred and comes back with the results.
   *
   * A batch goes to the worker already writing into one of its directories (`dirs`), if any. Creating and renaming
   * a file hold its directory's lock, and on ext4 without a journal an inode allocation made within minutes of many
   * deletions scans past every recently freed inode first (milliseconds per file once tens of thousands were
   * deleted, e.g. the previous restore): two workers in one directory then take turns, the waiting one spinning on
   * the lock, so a restore took up to twice the CPU. One worker per directory keeps both cores on useful work.
   */
  restoreFiles(slab: ArrayBuffer, files: SmallFileJob[], dirs: string[] = []): Promise<{ results: SmallFileResult[]; slab: ArrayBuffer }> {
    const idlest = this.leastBusy();
    let w = idlest;
    for (const dir of dirs) {
      const owner = this.dirWorkers.get(dir);
      // A directory with many batches (thousands of files) would keep the other worker idle: once its worker has
      // two batches queued and another has none, that one helps, locks and all.
      if (owner && (this.busy[owner.worker]! < 2 || this.busy[idlest]! > 0)) {
        w = owner.worker;
        break;
      }
    }
    this.busy[w]!++;
    // Only directories this worker owns (or now takes) are counted; one owned by the other worker stays there.
    const taken: string[] = [];
    for (const dir of dirs) {
      const owner = this.dirWorkers.get(dir);
      if (owner && owner.worker !== w) continue;
      if (owner) owner.batches++;
      else this.dirWorkers.set(dir, { worker: w, batches: 1 });
      taken.push(dir);
    }
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pendingFiles.set(seq, { resolve, reject, worker: w, dirs: taken });
      this.workers[w]!.postMessage({ seq, slab, files }, [slab]);
    });
  }

  private leaveDirs(dirs: string[]): void {
    for (const dir of dirs) {
      const owner = this.dirWorkers.get(dir);
      if (owner && --owner.batches === 0) this.dirWorkers.delete(dir);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
