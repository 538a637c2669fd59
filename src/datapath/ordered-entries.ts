/**
 * A directory listing whose entries may still be on their way: a large file the chunk worker is reading, or a
 * subdirectory that waits on one. The backup's walk goes on to the next names (and directories) meanwhile, so the
 * main thread does the small files' work while the worker does the large file's. Entries reach the listing in name
 * order all the same: each is written once every entry before it is known. Only the entries behind an unfinished one
 * are held, and the walk bounds how many (uploader.ts MAX_HELD_ENTRIES).
 */
import type { BlobId } from './ids.js';
import type { TreeEntry, TreeWriter } from './tree.js';

interface Slot {
  settled: boolean;
  entry: TreeEntry | undefined;
  error?: unknown;
}

export class OrderedEntries {
  private readonly waiting: Slot[] = [];
  private readonly inFlight: Promise<void>[] = [];
  private failure: { error: unknown } | undefined;

  /** `held` counts the entries waiting behind an unknown one, over every listing that shares it. */
  constructor(
    private readonly held: { count: number },
    private readonly listing: TreeWriter,
  ) {}

  /** An entry known now (undefined: nothing to list, e.g. an unreadable file that was reported). */
  add(entry: TreeEntry | undefined): void {
    if (this.waiting.length === 0) {
      if (entry) this.listing.add(entry);
      return;
    }
    this.waiting.push({ settled: true, entry });
    this.held.count++;
  }

  /** An entry known later. A rejection fails the listing: finish() throws it. */
  addLater(entry: Promise<TreeEntry | undefined>): void {
    const slot: Slot = { settled: false, entry: undefined };
    this.waiting.push(slot);
    this.held.count++;
    this.inFlight.push(
      entry.then(
        (value) => {
          slot.settled = true;
          slot.entry = value;
          this.drain();
        },
        (error: unknown) => {
          slot.settled = true;
          this.failure ??= { error };
        },
      ),
    );
  }

  private drain(): void {
    while (this.waiting.length > 0 && this.waiting[0]!.settled && !this.failure) {
      const { entry } = this.waiting.shift()!;
      this.held.count--;
      if (entry) this.listing.add(entry);
    }
  }

  /** Waits for every entry, then returns the listing's tree blob IDs. */
  async finish(): Promise<BlobId[]> {
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure.error;
    this.drain();
    return this.listing.finish();
  }
}
