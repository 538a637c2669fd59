/**
 * Deleting the last object under a prefix leaves no empty directory behind (a deleted backup's `backups/<name>/`
 * disappears, as on an object store), the root itself stays, and puts racing deletes in the same directory succeed.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { tempRoots } from '../../support/temp-roots.js';

const freshRoot = tempRoots('cairn-fs-prune-');

describe('filesystem object store directories', () => {
  it('removes directories emptied by delete, up to but not including the root', async () => {
    const root = join(freshRoot(), 'bucket', 'prefix');
    const store = new FilesystemObjectStore({ root });
    await store.put('backups/b1/velero-backup.json', Buffer.from('{}'));
    await store.put('backups/b1/b1.tar.gz', Buffer.from('x'));
    await store.put('backups/b2/velero-backup.json', Buffer.from('{}'));

    await store.delete('backups/b1/velero-backup.json');
    expect(existsSync(join(root, 'backups', 'b1'))).toBe(true);
    await store.delete('backups/b1/b1.tar.gz');
    expect(readdirSync(join(root, 'backups'))).toEqual(['b2']);

    await store.delete('backups/b2/velero-backup.json');
    expect(readdirSync(root)).toEqual([]);
    // Deleting what is already gone changes nothing and does not fail.
    await store.delete('backups/b2/velero-backup.json');
    expect(existsSync(root)).toBe(true);
  });

  it('puts racing deletes in the same directory all land', async () => {
    const store = new FilesystemObjectStore({ root: freshRoot(), durability: 'none' });
    const rounds = 300;
    for (let i = 0; i < rounds; i++) {
      // The directory holds only the object being deleted, so the delete may prune it while the put creates it.
      await store.put(`d${i}/old`, Buffer.from('z'));
      await Promise.all([store.delete(`d${i}/old`), store.put(`d${i}/new`, i % 2 ? Buffer.from('x') : Readable.from([Buffer.from('y')]))]);
    }
    const keys: string[] = [];
    for await (const o of store.list('')) keys.push(o.key);
    expect(keys).toHaveLength(rounds);
    expect(keys.every((k) => k.endsWith('/new'))).toBe(true);
  });
});
