/** A listing whose entries arrive out of order (ordered-entries.ts): written in the order they were added. */
import { describe, expect, it } from 'vitest';
import { OrderedEntries } from '../../../src/datapath/ordered-entries.js';
import { TreeWriter, type TreeEntry } from '../../../src/datapath/tree.js';
import type { BlobId } from '../../../src/datapath/ids.js';

function entry(n: string): TreeEntry {
  return { n, t: 'f', m: 0o644, u: 0, g: 0, mt: '0' };
}

function recordingListing(): { listing: TreeWriter; written: () => string[] } {
  const blobs: Buffer[] = [];
  const listing = new TreeWriter(async (data) => {
    blobs.push(data);
    return String(blobs.length) as BlobId;
  });
  const written = () =>
    blobs
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as TreeEntry).n);
  return { listing, written };
}

describe('OrderedEntries', () => {
  it('writes entries in the order they were added, holding those behind one not known yet', async () => {
    const held = { count: 0 };
    const { listing, written } = recordingListing();
    const entries = new OrderedEntries(held, listing);
    let release!: (e: TreeEntry) => void;
    entries.add(entry('a'));
    entries.addLater(new Promise<TreeEntry>((resolve) => (release = resolve)));
    entries.add(entry('c'));
    entries.add(undefined);
    entries.addLater(Promise.resolve(entry('d')));
    expect(held.count).toBe(4);
    release(entry('b'));
    await entries.finish();
    expect(written()).toEqual(['a', 'b', 'c', 'd']);
    expect(held.count).toBe(0);
  });

  it('fails the listing when an entry fails', async () => {
    const held = { count: 0 };
    const entries = new OrderedEntries(held, recordingListing().listing);
    entries.addLater(Promise.reject(new Error('EIO reading big.bin')));
    entries.add(entry('z'));
    await expect(entries.finish()).rejects.toThrow('EIO reading big.bin');
  });
});
