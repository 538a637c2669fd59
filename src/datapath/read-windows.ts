/**
 * A restore's pack reads through windows (Repository.useReadWindows): a miss fetches the window of the pack starting
 * at the blob, later blobs inside it are served from memory. Restores read packs nearly in order, so this turns
 * thousands of small ranged GETs (each a signed request on S3) into a few large ones. Off (size 0) every read is
 * its own ranged GET.
 */
import type { ObjectStore } from '../plugins/object-store/types.js';
import type { PackId } from './ids.js';
import type { MasterIndex } from './index-file.js';
import { packKey } from './pack.js';

/** Bytes of a pack fetched once for the many blobs a restore reads from it. */
interface ReadWindow {
  pack: PackId;
  start: number;
  end: number;
  /** The pooled buffer the bytes go into (undefined for an oversized one-off). */
  into: Buffer | undefined;
  data: Promise<Buffer>;
}

/**
 * Read windows kept by a restore. A restore reads from up to 8 large files and the small-file walk at once, each at
 * its own place in the packs: with 4 windows they evicted each other and a mixed restore read 2.06x the bytes it
 * wrote (on S3, twice the transfer); with 16 windows of 4 MiB, 1.25x. Read-ahead (read) adds up to one window per
 * reader, hence 24.
 */
const MAX_WINDOWS = 24;

/** The end of the last blob (of `ends`, sorted) that ends after `start` and by `limit`; `limit` when none does. */
function lastBlobEnd(ends: number[], start: number, limit: number): number {
  let lo = 0;
  let hi = ends.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid]! <= limit) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best >= 0 && ends[best]! > start ? ends[best]! : limit;
}

function blobEndsByPack(index: MasterIndex): Map<number, number[]> {
  const ends = new Map<number, number[]>();
  for (const [, loc] of index.entries()) {
    let list = ends.get(loc.pack);
    if (!list) ends.set(loc.pack, (list = []));
    list.push(loc.offset + loc.length);
  }
  for (const list of ends.values()) list.sort((a, b) => a - b);
  return ends;
}

export class ReadWindows {
  private windowSize = 0;
  private index: MasterIndex | undefined;
  /**
   * Per pack (by number), the ends of its blobs in order: windows end on a blob boundary. Made on the first read
   * through a window: a restore reads nearly everything with planned reads (restore-reads.ts) and its listings from
   * tree packs, so most restores never need it, and over millions of blobs it takes a while and tens of MB.
   */
  private packBlobEnds: Map<number, number[]> | undefined;
  private windows: ReadWindow[] = [];
  private readonly windowBuffers: Buffer[] = [];

  constructor(private readonly store: ObjectStore) {}

  /** Reads through windows of `size` bytes from now on, over the blobs of `index` (as it is at the first read). */
  use(size: number, index: MasterIndex): void {
    this.windowSize = size;
    this.index = index;
    this.packBlobEnds = undefined;
  }

  /** Bytes [offset, offset + length) of a pack (`packNumber` its number in the index). */
  async read(pack: PackId, packNumber: number, offset: number, length: number, signal?: AbortSignal, target?: Buffer): Promise<Buffer> {
    if (this.index && this.windowSize) this.packBlobEnds ??= blobEndsByPack(this.index);
    const ends = this.packBlobEnds?.get(packNumber);
    const dataEnd = ends?.at(-1);
    if (!this.windowSize || !ends || dataEnd === undefined || length > this.windowSize / 2) {
      return this.store.get(packKey(pack), { range: { offset, length }, ...(signal ? { signal } : {}), ...(target ? { target } : {}) });
    }
    const w =
      this.windows.find((x) => x.pack === pack && x.start <= offset && offset + length <= x.end) ??
      this.openWindow(pack, offset, lastBlobEnd(ends, offset, Math.max(offset + length, Math.min(offset + this.windowSize, dataEnd))));
    // Read-ahead: a reader past the middle of a window goes on into the next part of the pack (files are restored in
    // order, and their chunks were packed in order), so that part is fetched now; on S3 this overlaps the requests.
    // Windows end on a blob boundary, so the next one starts on one and no blob straddles the two.
    if (offset + length > (w.start + w.end) / 2 && w.end < dataEnd && !this.windows.some((x) => x.pack === pack && x.start <= w.end && w.end < x.end)) {
      this.openWindow(pack, w.end, lastBlobEnd(ends, w.end, Math.min(w.end + this.windowSize, dataEnd)));
    }
    const data = await w.data;
    return data.subarray(offset - w.start, offset - w.start + length);
  }

  private openWindow(pack: PackId, start: number, end: number): ReadWindow {
    const into = end - start <= this.windowSize ? (this.windowBuffers.pop() ?? Buffer.allocUnsafe(this.windowSize)) : undefined;
    const window: ReadWindow = { pack, start, end, into, data: this.store.get(packKey(pack), { range: { offset: start, length: end - start }, ...(into ? { target: into } : {}) }) };
    window.data.catch(() => {
      this.windows = this.windows.filter((x) => x !== window);
    });
    this.windows.push(window);
    if (this.windows.length > MAX_WINDOWS) this.retireWindow(this.windows.shift()!);
    return window;
  }

  /**
   * Window buffers are reused (8 MiB each, hundreds per GB restored: left to the GC they made RSS swing by hundreds of
   * MB). Every reader copies or opens the bytes it got from a window right after its await, so a retired window's
   * buffer is taken back only once its read has settled and one more turn of the event loop has passed.
   */
  private retireWindow(w: { into: Buffer | undefined; data: Promise<Buffer> }): void {
    const into = w.into;
    if (!into) return;
    const giveBack = () => setImmediate(() => void (this.windowBuffers.length < MAX_WINDOWS + 2 && this.windowBuffers.push(into)));
    w.data.then(
      (data) => data.buffer === into.buffer && giveBack(),
      () => undefined,
    );
  }
}
