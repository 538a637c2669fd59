import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leafDirectories, Trash } from '../../../bench/datapath/trash.js';
import { tempRoots } from '../../support/temp-roots.js';

const tempDir = tempRoots('cairn-bench-trash-');

describe('benchmark scratch trash', () => {
  it('moves trees aside at once and deletes them all later', async () => {
    const root = tempDir();
    const restore = join(root, 'runs', 'restore');
    for (const sub of ['a/x', 'a/y', 'b']) {
      mkdirSync(join(restore, sub), { recursive: true });
      writeFileSync(join(restore, sub, 'file'), 'data');
    }
    writeFileSync(join(restore, 'top'), 'data');
    const trash = new Trash(join(root, 'trash'));
    expect(leafDirectories(restore).map((d) => d.slice(restore.length)).sort()).toEqual(['/a/x', '/a/y', '/b']);
    trash.discard(restore);
    trash.discard(join(root, 'does-not-exist'));
    expect(existsSync(restore)).toBe(false);
    expect(trash.pending).toBe(true);
    await trash.empty();
    expect(trash.pending).toBe(false);
  });
});
