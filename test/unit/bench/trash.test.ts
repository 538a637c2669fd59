import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { leafDirectories, Trash } from '../../../bench/datapath/trash.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('benchmark scratch trash', () => {
  it('moves trees aside at once and deletes them all later', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cairn-bench-trash-'));
    dirs.push(root);
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
