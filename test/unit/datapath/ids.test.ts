/** Blob, pack and snapshot IDs (ids.ts): plain hex strings at run time, converted to and from bytes at the edges. */
import { describe, expect, it } from 'vitest';
import { blobIdOf, idBytes, newSnapshotId, packIdOf, parseSnapshotId, writeId } from '../../../src/datapath/ids.js';

describe('IDs', () => {
  const bytes = Buffer.from(Array.from({ length: 40 }, (_, i) => i));

  it('are the hex of their 32 bytes, read from and written back to any offset', () => {
    const id = blobIdOf(bytes, 4);
    expect(typeof id).toBe('string');
    expect(id).toBe(bytes.subarray(4, 36).toString('hex'));
    expect(packIdOf(bytes, 4)).toBe(id);
    expect(idBytes(id).equals(bytes.subarray(4, 36))).toBe(true);
    const out = Buffer.alloc(40);
    expect(writeId(id, out, 8)).toBe(40);
    expect(out.subarray(8).equals(bytes.subarray(4, 36))).toBe(true);
  });

  it('of snapshots from outside are taken only when they are 64 lowercase hex digits', () => {
    const id = newSnapshotId();
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(parseSnapshotId(id)).toBe(id);
    expect(parseSnapshotId(id.toUpperCase())).toBeUndefined();
    expect(parseSnapshotId(id.slice(1))).toBeUndefined();
    expect(parseSnapshotId('../config')).toBeUndefined();
  });
});
