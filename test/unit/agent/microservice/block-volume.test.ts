import { randomFillSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backupBlockVolume, blockVolumeSize, checkBlockVolume, restoreBlockVolume } from '../../../../src/agent/microservice/block-volume.js';
import { CancelledError, SnapshotNotFoundError } from '../../../../src/datapath/errors.js';
import { Repository } from '../../../../src/datapath/repository.js';
import { restore } from '../../../../src/datapath/restorer.js';
import { backup } from '../../../../src/datapath/uploader.js';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';

const work = mkdtempSync(join(tmpdir(), 'cairn-block-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SMALL_CHUNKS = { min: 16 * 1024, avg: 64 * 1024, max: 256 * 1024 };

async function newRepo(): Promise<Repository> {
  return Repository.init({ store: new FilesystemObjectStore({ root: mkdtempSync(join(work, 'repo-')), durability: 'none' }), password: 'pw', kdf: { N: 1024, r: 8, p: 1 }, chunkSizes: SMALL_CHUNKS });
}

/** A device image: random data, a long zero run (unused space), more random data, an odd length. */
function deviceImage(): Buffer {
  const img = Buffer.alloc(3 * 1024 * 1024 + 123);
  randomFillSync(img, 0, 1024 * 1024);
  randomFillSync(img, 2 * 1024 * 1024, 1024 * 1024 + 123);
  return img;
}

/** A file standing in for a device (or a restore's target device), holding `contents`. */
function deviceFile(name: string, contents: Buffer | string): string {
  const path = join(work, name);
  writeFileSync(path, contents);
  return path;
}

/** A new repository and a device stand-in `name` holding a fresh device image, ready to back up. */
async function deviceToBackUp(name: string): Promise<{ repo: Repository; img: Buffer; device: string }> {
  const repo = await newRepo();
  const img = deviceImage();
  return { repo, img, device: deviceFile(name, img) };
}

/** Restores a block snapshot onto the device stand-in `target`; gives the bytes written and what the device then holds. */
async function restoreOnto(repo: Repository, snapshotId: string, target: string): Promise<{ bytes: number; contents: Buffer }> {
  const { bytes } = await restoreBlockVolume({ repository: repo, snapshotId, devicePath: target });
  return { bytes, contents: readFileSync(target) };
}

describe('block volumes', () => {
  it('backs up a device (a file standing in) as one stream and restores it byte for byte, overwriting stale data', async () => {
    const { repo, img, device } = await deviceToBackUp('dev-a');
    const progress: number[] = [];
    const b = await backupBlockVolume({ repository: repo, devicePath: device, tags: { t: '1' }, onProgress: (p) => progress.push(p.doneBytes) });
    expect(b.bytes).toBe(img.length);
    expect(progress.at(-1)).toBe(img.length);
    const snap = await repo.snapshots.load(b.snapshotId);
    expect(snap.tags).toEqual({ t: '1' });
    expect(snap.summary.bytes).toBe(img.length);
    // The zero run is not stored as data (only the chunk that runs into it from the random bytes before it).
    expect(b.newBytes).toBeLessThan(img.length - 512 * 1024);

    const stale = deviceFile('dev-b', Buffer.alloc(img.length + 4096, 0xab)); // stale contents, longer than the image
    const r = await restoreOnto(repo, b.snapshotId, stale);
    expect(r.bytes).toBe(img.length);
    expect(r.contents.equals(img)).toBe(true);
  });

  it('a second backup of a changed device stores only the changed chunks and records its parent', async () => {
    const { repo, img, device } = await deviceToBackUp('dev-c');
    const first = await backupBlockVolume({ repository: repo, devicePath: device });
    randomFillSync(img, 100, 1000);
    writeFileSync(device, img);
    const second = await backupBlockVolume({ repository: repo, devicePath: device, parent: first.snapshotId });
    expect(second.newBytes).toBeLessThan(SMALL_CHUNKS.max * 2);
    expect((await repo.snapshots.load(second.snapshotId)).parent).toBe(first.snapshotId);
    expect((await restoreOnto(repo, second.snapshotId, deviceFile('dev-d', ''))).contents.equals(img)).toBe(true);
  });

  it('the snapshot is an ordinary one: a file-system restore gives the device image as a file', async () => {
    const { repo, img, device } = await deviceToBackUp('dev-e');
    const b = await backupBlockVolume({ repository: repo, devicePath: device });
    const out = mkdtempSync(join(work, 'fs-'));
    await restore({ repository: repo, snapshotId: b.snapshotId, target: out });
    expect(readFileSync(join(out, 'block-volume')).equals(img)).toBe(true);
  });

  it('refuses to write a file-system snapshot to a device', async () => {
    const repo = await newRepo();
    const dir = mkdtempSync(join(work, 'src-'));
    writeFileSync(join(dir, 'a.txt'), 'a');
    writeFileSync(join(dir, 'b.txt'), 'b');
    const b = await backup({ source: dir, repository: repo });
    const target = deviceFile('dev-f', 'keep me');
    await expect(restoreBlockVolume({ repository: repo, snapshotId: b.snapshotId, devicePath: target })).rejects.toThrow(SnapshotNotFoundError);
    expect(readFileSync(target, 'utf8')).toBe('keep me');
  });

  it('a cancelled backup leaves no snapshot and says so', async () => {
    const { repo, device } = await deviceToBackUp('dev-g');
    const abort = new AbortController();
    abort.abort(new Error('stop'));
    await expect(backupBlockVolume({ repository: repo, devicePath: device, signal: abort.signal })).rejects.toThrow(CancelledError);
    expect(await repo.snapshots.list()).toEqual([]);
  });

  it('tells devices and stand-in files from other paths, and sizes a stand-in by its length', () => {
    const file = join(work, 'dev-h');
    writeFileSync(file, Buffer.alloc(4096));
    expect(() => checkBlockVolume(file)).not.toThrow();
    expect(blockVolumeSize(file)).toBe(4096);
    expect(() => checkBlockVolume(work)).toThrow(/not a block device/);
    expect(() => checkBlockVolume(join(work, 'missing'))).toThrow(/not accessible: ENOENT/);
    expect(blockVolumeSize(work)).toBeUndefined();
  });
});
