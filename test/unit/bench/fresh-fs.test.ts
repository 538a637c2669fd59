import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanLeftoverFilesystems,
  filesystemGeometry,
  freshFilesystemsDir,
  loopDevicesUnder,
  MINIMUM_IMAGE_BYTES,
  mountPointsUnder,
  openFreshFilesystem,
  probeFreshFilesystems,
  withFreshFilesystem,
} from '../../../bench/datapath/fresh-fs.js';

const MiB = 1024 * 1024;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    cleanLeftoverFilesystems(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-freshfs-'));
  dirs.push(dir);
  return dir;
}

/** Mounts and loop devices that still refer to anything below dir. */
function leftovers(dir: string): string[] {
  const listing = execFileSync('losetup', ['--list', '--json', '--output', 'NAME,BACK-FILE'], { encoding: 'utf8' });
  return [...mountPointsUnder(readFileSync('/proc/mounts', 'utf8'), dir), ...loopDevicesUnder(listing, dir)];
}

describe('fresh restore filesystem geometry', () => {
  it('leaves room for the data, a block of slack per file and an inode per file and directory', () => {
    const mixed = filesystemGeometry({ bytes: 1_224_000_000, files: 20_020, dirs: 101 });
    expect(mixed.imageBytes).toBeGreaterThan(1_224_000_000 + 20_020 * 4096);
    expect(mixed.imageBytes).toBeLessThan(3 * 1_224_000_000);
    expect(mixed.imageBytes % MiB).toBe(0);
    expect(mixed.inodes).toBeGreaterThan(20_121);
  });

  it('has enough inodes for a million tiny files when the directory count is unknown', () => {
    const tiny = filesystemGeometry({ bytes: 16_000_000, files: 1_000_000 });
    expect(tiny.inodes).toBeGreaterThan(1_001_000);
    // Every inode needs 256 bytes of inode table; every non-empty file at least one 4 KiB block.
    expect(tiny.imageBytes).toBeGreaterThan(tiny.inodes * 256 + 1_000_000 * 4096);
  });

  it('never goes below the minimum image size', () => {
    expect(filesystemGeometry({ bytes: 0, files: 0, dirs: 0 }).imageBytes).toBeGreaterThanOrEqual(MINIMUM_IMAGE_BYTES);
  });
});

describe('leftover detection', () => {
  it('finds mount points below the scratch dir only, deepest first, with escaped spaces decoded', () => {
    const mounts = [
      '/dev/vda / ext4 rw,relatime,discard 0 0',
      '/dev/loop3 /data/bench/fresh-fs/12-0.mnt ext4 rw,relatime 0 0',
      '/dev/loop4 /data/bench/fresh-fs/a\\040b.mnt ext4 rw 0 0',
      '/dev/loop5 /data/bench/fresh-fs/12-0.mnt/inner ext4 rw 0 0',
      '/dev/loop6 /data/bench/fresh-fs-other/x.mnt ext4 rw 0 0',
      '/dev/loop7 /data/bench/fresh-fs ext4 rw 0 0',
      '',
    ].join('\n');
    expect(mountPointsUnder(mounts, '/data/bench/fresh-fs')).toEqual([
      '/data/bench/fresh-fs/12-0.mnt/inner',
      '/data/bench/fresh-fs/12-0.mnt',
      '/data/bench/fresh-fs/a b.mnt',
    ]);
  });

  it('finds loop devices backed by images below the scratch dir, deleted images included', () => {
    const listing = JSON.stringify({
      loopdevices: [
        { name: '/dev/loop0', 'back-file': '/data/bench/fresh-fs/12-0.img' },
        { name: '/dev/loop1', 'back-file': '/data/bench/fresh-fs/12-1.img (deleted)' },
        { name: '/dev/loop2', 'back-file': '/var/lib/other.img' },
        { name: '/dev/loop3', 'back-file': null },
      ],
    });
    expect(loopDevicesUnder(listing, '/data/bench/fresh-fs')).toEqual(['/dev/loop0', '/dev/loop1']);
    expect(loopDevicesUnder('', '/data/bench/fresh-fs')).toEqual([]);
  });
});

// Needs root, mkfs.ext4 and loop devices, which the project's test machine has (tests are never skipped).
describe('fresh restore filesystem on a loop device', () => {
  it('mounts an empty ext4 filesystem and leaves nothing behind when closed', async () => {
    const dir = scratch();
    const content = { bytes: 1 * MiB, files: 10, dirs: 1 };
    const seen = await withFreshFilesystem({ scratchDir: dir, content }, async (fs) => {
      expect(readdirSync(fs.dir)).toEqual([]);
      const mount = readFileSync('/proc/mounts', 'utf8').split('\n').find((line) => line.split(' ')[1] === fs.dir);
      expect(mount?.split(' ')[2]).toBe('ext4');
      writeFileSync(join(fs.dir, 'restored.txt'), 'data');
      return { dir: fs.dir, image: fs.image };
    });
    expect(existsSync(seen.dir)).toBe(false);
    expect(existsSync(seen.image)).toBe(false);
    expect(leftovers(dir)).toEqual([]);
  });

  it('closes the filesystem when the work inside it fails', async () => {
    const dir = scratch();
    await expect(
      withFreshFilesystem({ scratchDir: dir, content: { bytes: 0, files: 0 } }, () => Promise.reject(new Error('restore failed'))),
    ).rejects.toThrow('restore failed');
    expect(leftovers(dir)).toEqual([]);
  });

  it('reports why when a filesystem cannot be made, so the bench can fall back to a directory', () => {
    const probed = probeFreshFilesystems('/dev/null/cannot-be-a-dir');
    expect(probed.available).toBe(false);
    expect(probed.available ? '' : probed.reason).toMatch(/ENOTDIR/);
  });

  it('removes what an interrupted run left mounted and attached', () => {
    const dir = scratch();
    const fs = openFreshFilesystem({ scratchDir: dir, content: { bytes: 0, files: 0 } });
    writeFileSync(join(fs.dir, 'half-restored'), 'data');
    expect(leftovers(dir)).toHaveLength(2);
    const cleaned = cleanLeftoverFilesystems(dir);
    expect(cleaned).toEqual([`unmounted ${fs.dir}`, `detached ${fs.device}`]);
    expect(leftovers(dir)).toEqual([]);
    expect(existsSync(freshFilesystemsDir(dir))).toBe(false);
    fs.close();
  });
});
