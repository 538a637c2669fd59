/**
 * Reads small files' blobs ahead of the batches that write them. The walk hands files over in order; they are
 * gathered into groups of a few MiB of sealed bytes, each group's blobs are read with a few planned ranged reads
 * (read-plan.ts: neighbours in a pack in one request), and the files are then added to the batches
 * (SmallFileRestorer) in walk order from those bytes. While one group is fed, the reads of the next ones are in
 * flight: from an object store, the walk no longer waits a round trip each time it reaches another part of a pack.
 * The reads count against the restore's byte budget (restore-reads.ts) until their group has been copied into the
 * batches, so read-ahead stays bounded however many files there are.
 */
import type { BlobId, PackId } from './ids.js';
import type { PackReader } from './repository-roles.js';
import { planPackReads, type PackRead, type PackSpan } from './read-plan.js';
import { cut, startRead, type ByteBudget, type HeldRead, type ReadBuffers } from './restore-reads.js';
import type { SealedSource, SmallFileRestorer } from './small-files.js';
import { isBundleSlice, type TreeEntry } from './tree.js';

/**
 * Sealed bytes a group plans before its reads start. A backup writes the bundles of several directories side by side,
 * so a directory's bundles lie apart in the packs: planned over 4 MiB of them, the mixed benchmark's small files took
 * ~300 reads of ~130 KB; over 16 MiB, neighbours are mostly in the same group.
 */
export const GROUP_BYTES = 16 << 20;
/** Files a group holds at most. */
export const GROUP_FILES = 8192;

interface Blob extends PackSpan<PackId> {
  hex: BlobId;
}

interface GroupFile {
  e: TreeEntry;
  dirAbs: string;
  rel: string;
}

interface Group {
  files: GroupFile[];
  blobs: Map<BlobId, Blob>;
  bytes: number;
  /** Settles once every file of the group is written (or reported). */
  done: Promise<void>;
  settle: (p: Promise<void>) => void;
}

export interface SmallFileGroupOptions {
  restorer: SmallFileRestorer;
  repository: PackReader;
  budget: ByteBudget;
  buffers?: ReadBuffers;
  signal?: AbortSignal;
  /** True once the restore stops: files not yet added are skipped. */
  stopped: () => boolean;
}

export class SmallFileGroups {
  private open: Group | undefined;
  /** Groups are fed to the batches one after another, in walk order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly options: SmallFileGroupOptions) {}

  /**
   * Queues a file (SmallFileRestorer.eligible); resolves, once the file is planned, to the promise that its group is
   * written (wrapped: an async function would otherwise wait for it). Waits while the read budget is spent.
   */
  async add(e: TreeEntry, dirAbs: string, rel: string): Promise<{ group: Promise<void> }> {
    const g = (this.open ??= newGroup());
    this.addTo(g, { e, dirAbs, rel });
    const group = g.done;
    if (g.bytes >= GROUP_BYTES || g.files.length >= GROUP_FILES) await this.flush();
    return { group };
  }

  private addTo(g: Group, file: GroupFile): void {
    g.files.push(file);
    const index = this.options.repository.index;
    for (const item of file.e.c ?? []) {
      const hex = isBundleSlice(item) ? item.b : typeof item === 'string' ? item : undefined;
      if (hex === undefined || g.blobs.has(hex)) continue;
      const loc = index.get(hex);
      // A blob missing from the index is reported for its file when the file is added (readSealed says so).
      if (!loc) continue;
      g.blobs.set(hex, { hex, pack: index.packOf(loc), offset: loc.offset, length: loc.length });
      g.bytes += loc.length;
    }
  }

  /** Starts the open group's reads (waiting for budget) and queues it to be fed to the batches. */
  async flush(): Promise<void> {
    const g = this.open;
    this.open = undefined;
    if (!g) return;
    const parts = this.withinBudget(g, planPackReads([...g.blobs.values()], (b) => b));
    if (parts.length > 1) g.settle(Promise.all(parts.map((p) => p.group.done)).then(() => undefined));
    for (const part of parts) await this.start(part.group, part.reads);
  }

  /**
   * The group as parts whose reads fit in half the budget. A group holds its reads until all of them are in and its
   * files are in the batches, so reads of one group beyond the budget would wait on that group itself, forever. The
   * bytes between blobs that reads take along (up to 64 KiB each, read-plan.ts) are not in a group's size: a group
   * of many small blobs lying apart in their packs reads far more than its size. Split in halves, in walk order.
   */
  private withinBudget(g: Group, reads: PackRead<Blob, PackId>[]): { group: Group; reads: PackRead<Blob, PackId>[] }[] {
    const bytes = reads.reduce((sum, r) => sum + r.length, 0);
    if (bytes <= this.options.budget.capacity / 2 || g.files.length < 2) return [{ group: g, reads }];
    const half = g.files.length >> 1;
    return [g.files.slice(0, half), g.files.slice(half)].flatMap((files) => {
      const part = newGroup();
      for (const f of files) this.addTo(part, f);
      return this.withinBudget(part, planPackReads([...part.blobs.values()], (b) => b));
    });
  }

  /**
   * Starts a group's reads once the budget holds all of their bytes. Taken read by read, a group held its first reads
   * while a later one queued behind a large file's read that was waiting for those very bytes: the group was never
   * fed, so it never let them go (with a budget under twice a large read, a restore waited forever).
   */
  private async start(g: Group, reads: PackRead<Blob, PackId>[]): Promise<void> {
    const repo = this.options.repository;
    const signal = this.options.signal;
    const budget = this.options.budget;
    const fetched = new Map<BlobId, { read: PackRead<Blob, PackId>; data: Promise<HeldRead> }>();
    const holds: Promise<HeldRead>[] = [];
    // The walk goes on once the reads are under way; it waits here only while the budget is spent (a group of files
    // whose contents lie in their listings reads nothing, and does not queue behind other reads).
    const bytes = reads.reduce((sum, r) => sum + r.length, 0);
    const taken = bytes > 0 ? await budget.acquire(bytes) : 0;
    for (const read of reads) {
      const started = startRead({
        span: read,
        read: (span, target) => repo.readPackSpan(span, read.items[0]!.hex, signal, target),
        ...(this.options.buffers ? { buffers: this.options.buffers } : {}),
      });
      holds.push(started.data);
      for (const b of read.items) fetched.set(b.hex, { read, data: started.data });
    }
    const fed = this.chain.then(() => this.feed(g, fetched, holds));
    // Every read settled and released (its buffer given back): the group's bytes are free again.
    const free = () => void Promise.allSettled(holds).then(() => budget.release(taken));
    fed.then(free, free);
    this.chain = fed.then(
      () => undefined,
      () => undefined,
    );
    g.settle(fed.then((batches) => Promise.all(batches).then(() => undefined)));
  }

  /** Adds a group's files to the batches from its reads; returns the batches they went into. */
  private async feed(g: Group, fetched: Map<BlobId, { read: PackRead<Blob, PackId>; data: Promise<HeldRead> }>, holds: Promise<HeldRead>[]): Promise<Promise<void>[]> {
    const repo = this.options.repository;
    const source: SealedSource = async (hex) => {
      const hit = fetched.get(hex);
      if (!hit) return repo.readSealed(hex, this.options.signal ? { signal: this.options.signal } : {});
      const held = await hit.data;
      const loc = repo.index.get(hex)!;
      return { sealed: cut(hit.read, held.data, { pack: hit.read.pack, offset: loc.offset, length: loc.length }), loc, pack: hit.read.pack };
    };
    const batches = new Set<Promise<void>>();
    try {
      for (const f of g.files) {
        if (this.options.stopped()) break;
        const queued = await this.options.restorer.add(f.e, f.dirAbs, f.rel, source);
        if (queued) batches.add(queued.batch);
      }
    } finally {
      // Every file's bytes are copied into its batch's slab: the reads' budget is free again.
      for (const h of holds) h.then((x) => x.release(), () => undefined);
    }
    return [...batches];
  }

  /** Feeds the last group, then sends every batch off and waits for them. */
  async drain(): Promise<void> {
    await this.flush();
    await this.chain;
    await this.options.restorer.drain();
  }
}

function newGroup(): Group {
  let settle!: (p: Promise<void>) => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  return { files: [], blobs: new Map(), bytes: 0, done, settle };
}
