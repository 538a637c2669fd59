// A restore writes a file that does not exist yet under its own name, and replaces anything already at a file's name
// (a file, a symlink) whole through a temporary name: these tests hold the second half, for small files (restored in
// batches on the workers) and large ones alike.
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backup } from '../../../src/datapath/uploader.js';
import { restore } from '../../../src/datapath/restorer.js';
import { cleanupTempDirs, newRepo, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

describe('restoring over what is already in the target', () => {
  it('replaces existing files and symlinks whole, never writes through a symlink, and leaves no temporary file', async () => {
    const repo = await newRepo();
    const src = tempDir('existing-src');
    const large = randomBytes(3 << 20);
    writeFileSync(join(src, 'small.txt'), 'restored small\n');
    writeFileSync(join(src, 'large.bin'), large);
    writeFileSync(join(src, 'through-link.txt'), 'restored through\n');
    writeFileSync(join(src, 'new.txt'), 'new\n');
    const { snapshotId } = await backup({ source: src, repository: repo });

    const dst = tempDir('existing-dst');
    const outside = tempDir('existing-outside');
    writeFileSync(join(outside, 'victim'), 'must stay\n');
    writeFileSync(join(dst, 'small.txt'), 'an older, longer version of the small file\n'.repeat(10));
    writeFileSync(join(dst, 'large.bin'), randomBytes(5 << 20));
    symlinkSync(join(outside, 'victim'), join(dst, 'through-link.txt'));

    const r = await restore({ repository: repo, snapshotId, target: dst });
    expect(r.errors).toEqual([]);
    expect(readFileSync(join(dst, 'small.txt'), 'utf8')).toBe('restored small\n');
    expect(readFileSync(join(dst, 'large.bin')).equals(large)).toBe(true);
    expect(lstatSync(join(dst, 'through-link.txt')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dst, 'through-link.txt'), 'utf8')).toBe('restored through\n');
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('must stay\n');
    expect(readFileSync(join(dst, 'new.txt'), 'utf8')).toBe('new\n');
    expect(readdirSync(dst).filter((n) => n.endsWith('.cairn-restore'))).toEqual([]);
  });

  it('restores a symlink over a file of the same name', async () => {
    const repo = await newRepo();
    const src = tempDir('existing-src2');
    mkdirSync(join(src, 'd'));
    symlinkSync('../elsewhere', join(src, 'd', 'link'));
    const { snapshotId } = await backup({ source: src, repository: repo });
    const dst = tempDir('existing-dst2');
    mkdirSync(join(dst, 'd'));
    writeFileSync(join(dst, 'd', 'link'), 'a file in the way\n');
    const r = await restore({ repository: repo, snapshotId, target: dst });
    expect(r.errors).toEqual([]);
    expect(readlinkSync(join(dst, 'd', 'link'))).toBe('../elsewhere');
  });
});
