/**
 * Reads the parent snapshot's listings ahead of a backup's walk, several at once.
 *
 * Why: an incremental backup compares every directory with its listing in the parent snapshot. Read one at a time
 * when the walk reaches each directory, that is a chain of thousands of awaits (a pack read on the thread pool, a
 * decompression on the thread pool, then the decryption and the ID check here), and the walk stands still during
 * each one: on a busy node every await is one more scheduling race lost. Here the listings the walk will need next
 * are already read, opened and parsed while it works on the current one.
 *
 * The parent tree is walked in the backup's order (names sorted, depth first: listings are stored sorted), up to
 * MAX_IN_FLIGHT listings loading at once and at most MAX_AHEAD_ENTRIES entries held that the walk has not taken. The
 * walk asks for a listing by its blob IDs (take); listings it passes by (directories gone, excluded, or replaced by a
 * file) are dropped with everything queued before the one it takes. A listing that could not be read is left for the
 * walk to read itself, so errors are reported exactly as before.
 */
import type { BlobId } from './ids.js';
import type { TreeEntry } from './tree.js';

/** Entries of read listings held ahead of the walk at most (a listing larger than this is still read whole). */
const MAX_AHEAD_ENTRIES = 16_384;
/** Listings being read at once. */
const MAX_IN_FLIGHT = 8;

export type Listing = Map<string, TreeEntry>;

interface Pending {
  key: string;
  sub: readonly BlobId[];
  state: 'queued' | 'loading' | 'ready';
  /** The walk has it (it left the queue); a listing still loading then queues its children at the queue's head. */
  taken: boolean;
  result: Promise<Listing | undefined>;
  resolve: (listing: Listing | undefined) => void;
  /** Entries it holds ahead of the walk, once read. */
  weight: number;
}

const keyOf = (sub: readonly BlobId[]): string => sub.join(',');

export class TreeAhead {
  /** Listings the walk has not taken yet, in walk order. */
  private queue: Pending[] = [];
  private inFlight = 0;
  private ahead = 0;
  private stopped = false;

  constructor(
    rootSub: readonly BlobId[],
    private readonly loadBlob: (id: BlobId) => Promise<Buffer>,
  ) {
    this.queue.push(pending(rootSub));
    this.pump();
  }

  /** The parsed listing stored as `sub`, when it is coming; undefined when the walk must read it itself. */
  take(sub: readonly BlobId[]): Promise<Listing | undefined> | undefined {
    const key = keyOf(sub);
    const at = this.queue.findIndex((p) => p.key === key);
    if (at < 0) return undefined;
    // Everything before it in walk order is a directory the walk went past: drop those, freeing their room.
    const passed = this.queue.splice(0, at + 1);
    const wanted = passed[at]!;
    wanted.taken = true;
    for (const p of passed) {
      this.ahead -= p.weight;
      p.weight = 0;
      if (p.state === 'queued' && p !== wanted) p.resolve(undefined);
    }
    this.pump();
    return wanted.result;
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.queue) if (p.state === 'queued') p.resolve(undefined);
    this.queue = [];
  }

  /** Starts reading the next listings in walk order, within the bounds. */
  private pump(): void {
    for (const p of this.queue) {
      if (this.stopped || this.inFlight >= MAX_IN_FLIGHT || this.ahead >= MAX_AHEAD_ENTRIES) return;
      if (p.state !== 'queued') continue;
      p.state = 'loading';
      this.inFlight++;
      void this.load(p);
    }
  }

  private async load(p: Pending): Promise<void> {
    let listing: Listing | undefined;
    try {
      listing = new Map();
      for (const id of p.sub) parseInto(listing, (await this.loadBlob(id)).toString('utf8'));
    } catch {
      listing = undefined;
    }
    this.inFlight--;
    p.state = 'ready';
    // Taken while it was loading: it was the head of the walk order, so its subdirectories go first.
    const queued = this.queue.indexOf(p);
    const at = this.stopped ? -1 : p.taken ? 0 : queued < 0 ? -1 : queued + 1;
    if (listing && at >= 0) {
      // Still wanted: its subdirectories come right after it in walk order, before its later siblings.
      if (!p.taken) {
        p.weight = listing.size;
        this.ahead += p.weight;
      }
      const children: Pending[] = [];
      for (const e of listing.values()) if (e.t === 'd' && e.sub) children.push(pending(e.sub));
      this.queue.splice(at, 0, ...children);
    }
    p.resolve(listing);
    this.pump();
  }
}

function pending(sub: readonly BlobId[]): Pending {
  let resolve!: (listing: Listing | undefined) => void;
  const result = new Promise<Listing | undefined>((r) => (resolve = r));
  return { key: keyOf(sub), sub, state: 'queued', taken: false, result, resolve, weight: 0 };
}

/** Adds the entries of one tree blob (NDJSON, tree.ts) to `listing`. */
function parseInto(listing: Listing, text: string): void {
  let from = 0;
  for (;;) {
    const nl = text.indexOf('\n', from);
    if (nl < 0) return;
    const e = JSON.parse(text.slice(from, nl)) as TreeEntry;
    listing.set(e.n, e);
    from = nl + 1;
  }
}
