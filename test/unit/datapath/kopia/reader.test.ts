/**
 * The kopia reader against repositories the kopia Velero bundles made (test/fixtures/kopia/make-fixtures.sh): the
 * format blob and key derivation (scrypt, pbkdf2), both encryptions and two hashes, sharded and flat layouts, epoch
 * and legacy index management, index v1 and v2, direct and indirect objects, object- and content-level compression
 * with every compressor family, and restore with modes, setuid, symlinks, empty directories and times.
 */
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RepositoryCorruptError, WrongPasswordError } from '../../../../src/datapath/errors.js';
import { heapTuningHolders } from '../../../../src/datapath/heap-tuning.js';
import { UnsupportedKopiaRepositoryError } from '../../../../src/datapath/kopia/format.js';
import { KopiaRepository } from '../../../../src/datapath/kopia/repository.js';
import { restoreKopiaSnapshot } from '../../../../src/datapath/kopia/restore.js';
import { FilesystemObjectStore } from '../../../../src/plugins/object-store/index.js';
import { expectedTree } from './fixture-tree.js';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/kopia');
const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as {
  'velero-default': { snapshots: string[] };
  'chacha-flat': { snapshots: string[] };
  'legacy-v1': { snapshots: string[] };
  compressors: { byCompressor: Record<string, string> };
};
const PASSWORD = 'static-passw0rd';
const temps: string[] = [];
const temp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const storeOf = (root: string) => new FilesystemObjectStore({ root });
const open = (name: string, password = PASSWORD) => KopiaRepository.open({ store: storeOf(join(FIXTURES, 'repos', name)), password });

function checkRestored(root: string, tag = ''): void {
  const want = expectedTree(tag);
  for (const [rel, f] of Object.entries(want.files)) {
    expect(readFileSync(join(root, rel)).equals(f.bytes), `${rel} bytes`).toBe(true);
    expect(statSync(join(root, rel)).mode & 0o7777, `${rel} mode`).toBe(f.mode);
  }
  for (const [rel, mode] of Object.entries(want.dirs)) expect(statSync(join(root, rel)).mode & 0o7777, `${rel} mode`).toBe(mode);
  for (const [rel, target] of Object.entries(want.symlinks)) {
    expect(lstatSync(join(root, rel)).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, rel))).toBe(target);
  }
  expect(readdirSync(join(root, 'empty-dir'))).toEqual([]);
  // Nothing else, and no temporary files left behind.
  expect(readdirSync(root).sort()).toEqual(['dir', 'empty-dir', 'empty.txt', 'hello.txt', 'link-to-nested', 'setuid.sh']);
  // The script set these times (…56.123456789); a restore keeps them to the microsecond.
  for (const rel of ['hello.txt', 'dir', 'empty-dir', 'link-to-nested']) expect(lstatSync(join(root, rel), { bigint: true }).mtimeNs / 1000n % 1_000_000n, `${rel} mtime`).toBe(123456n);
}

describe('opening kopia repositories', () => {
  it('reads the configuration Velero repositories have: scrypt, AES256-GCM-HMAC-SHA256, BLAKE2B-256-128, format 3, epochs, sharded', async () => {
    const repo = await open('velero-default');
    expect(repo.formatBlob.keyAlgo).toBe('scrypt-65536-8-1');
    expect(repo.config).toMatchObject({ hash: 'BLAKE2B-256-128', encryption: 'AES256-GCM-HMAC-SHA256', version: 3, indexVersion: 2, epochs: true });
    expect(repo.blobs.layout).toEqual({ kind: 'sharded', shards: { default: [1, 3], maxNonShardedLength: 20 } });
    expect(repo.listSnapshots().map((s) => s.id)).toEqual(expected['velero-default'].snapshots);
  });

  it('reads CHACHA20-POLY1305 with HMAC-SHA256-128, pbkdf2 and an unsharded filesystem layout', async () => {
    const repo = await open('chacha-flat');
    expect(repo.formatBlob.keyAlgo).toBe('pbkdf2-sha256-600000');
    expect(repo.config).toMatchObject({ hash: 'HMAC-SHA256-128', encryption: 'CHACHA20-POLY1305-HMAC-SHA256' });
    // kopia's --flat: no shard directories (still the .f suffix).
    expect(repo.blobs.layout).toEqual({ kind: 'sharded', shards: { default: [], maxNonShardedLength: 20 } });
  });

  it('reads a format version 1 repository: index v1, legacy index blobs, no epochs', async () => {
    const repo = await open('legacy-v1');
    expect(repo.config).toMatchObject({ version: 1, indexVersion: 1, epochs: false });
    expect(repo.index.blobs.every((b) => b.name.startsWith('n'))).toBe(true);
  });

  it('says the password is wrong', async () => {
    await expect(open('velero-default', 'not-the-password')).rejects.toBeInstanceOf(WrongPasswordError);
    await expect(open('chacha-flat', 'not-the-password')).rejects.toBeInstanceOf(WrongPasswordError);
  });

  it('refuses error correction, which it does not implement', async () => {
    await expect(open('ecc')).rejects.toThrow(UnsupportedKopiaRepositoryError);
    await expect(open('ecc')).rejects.toThrow(/error correction \(REED-SOLOMON-CRC32, 2%\)/);
  });

  it('finds no repository where there is none', async () => {
    await expect(KopiaRepository.open({ store: storeOf(temp('kopia-none-')), password: PASSWORD })).rejects.toThrow(/no kopia repository at/);
    expect(await KopiaRepository.exists(storeOf(temp('kopia-none-')))).toBe(false);
    expect(await KopiaRepository.exists(storeOf(join(FIXTURES, 'repos', 'chacha-flat')))).toBe(true);
  });
});

describe('restoring kopia snapshots', () => {
  it.each(['velero-default', 'chacha-flat', 'legacy-v1'] as const)('%s: every file, mode, symlink, directory and time', async (name) => {
    const repo = await open(name);
    const target = temp(`kopia-restore-${name}-`);
    const progress: number[] = [];
    const holders: number[] = [];
    const before = heapTuningHolders();
    const result = await restoreKopiaSnapshot({
      repository: repo,
      snapshotId: expected[name].snapshots[0]!,
      target,
      onProgress: (p) => {
        progress.push(p.doneBytes);
        holders.push(heapTuningHolders());
      },
      progressIntervalMs: 0,
    });
    expect(result.errors).toEqual([]);
    expect(result.stats).toMatchObject({ files: 7, symlinks: 1, dirs: 3 });
    checkRestored(target);
    expect(progress.at(-1)).toBe(result.stats.bytes);
    // The data path's heap settings (heap-tuning.ts) are held while it runs and given back when it ends.
    expect(holders.length).toBeGreaterThan(0);
    expect(holders.every((n) => n === before + 1)).toBe(true);
    expect(heapTuningHolders()).toBe(before);
  });

  it.each(Object.keys(expected.compressors.byCompressor))('decompresses %s', async (compressor) => {
    const repo = await open('compressors');
    const target = temp(`kopia-restore-${compressor}-`);
    const result = await restoreKopiaSnapshot({ repository: repo, snapshotId: expected.compressors.byCompressor[compressor]!, target });
    expect(result.errors).toEqual([]);
    checkRestored(target, compressor);
  });

  it('recomputes every ID when asked to (verify), on the content workers as on this thread', async () => {
    const repo = await KopiaRepository.open({ store: storeOf(join(FIXTURES, 'repos', 'velero-default')), password: PASSWORD, verify: true });
    const target = temp('kopia-verify-');
    const result = await restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target });
    expect(result.errors).toEqual([]);
    checkRestored(target);
  });

  it('a file the target cannot take is reported against its path; the others are restored and no temporary file is left', async () => {
    const repo = await open('velero-default');
    const target = temp('kopia-blocked-');
    // A directory where a file goes: the file's rename into place fails (EISDIR).
    mkdirSync(join(target, 'hello.txt'));
    const result = await restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target });
    expect(result.errors).toEqual([{ path: 'hello.txt', reason: expect.stringMatching(/^EISDIR/) as unknown as string }]);
    expect(result.stats.files).toBe(6);
    expect(readFileSync(join(target, 'dir/sub/nested.txt')).length).toBeGreaterThan(0);
    expect(readdirSync(target, { recursive: true }).filter((n) => String(n).includes('.cairn-restore'))).toEqual([]);
  });

  it('writes runs of zeros as holes', async () => {
    const repo = await open('velero-default');
    const target = temp('kopia-sparse-');
    await restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target });
    // 12 KiB of zeros then 4 bytes: only the last 4 KiB block is allocated.
    expect(statSync(join(target, 'dir/zeros-then-tail.bin')).blocks * 512).toBeLessThanOrEqual(4096);
  });

  it('stops when cancelled', async () => {
    const repo = await open('velero-default');
    const ac = new AbortController();
    ac.abort();
    await expect(restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target: temp('kopia-cancel-'), signal: ac.signal })).rejects.toThrow('cancelled');
  });

  it('a cancel in the middle waits for the files the workers are writing: no temporary file is left behind', async () => {
    const repo = await open('velero-default');
    const ac = new AbortController();
    const target = temp('kopia-cancel-mid-');
    const restore = restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target, signal: ac.signal, progressIntervalMs: 0, onProgress: () => ac.abort() });
    await expect(restore).rejects.toThrow('cancelled');
    expect(readdirSync(target, { recursive: true }).filter((n) => String(n).includes('.cairn-restore'))).toEqual([]);
  });

  it('says which snapshot is not there', async () => {
    const repo = await open('velero-default');
    await expect(restoreKopiaSnapshot({ repository: repo, snapshotId: '00000000000000000000000000000000', target: temp('kopia-none-') })).rejects.toThrow(/snapshot 0{32} not found/);
  });
});

describe('damaged repositories', () => {
  const copy = (name: string) => {
    const dir = temp(`kopia-copy-${name}-`);
    cpSync(join(FIXTURES, 'repos', name), dir, { recursive: true });
    return dir;
  };
  const files = (root: string, prefix: string): string[] =>
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => join(d.parentPath, d.name))
      .filter((p) => p.slice(root.length + 1).replaceAll('/', '').startsWith(prefix));

  it('a corrupt pack fails the restore naming the content and the pack', async () => {
    const dir = copy('velero-default');
    for (const pack of files(dir, 'p')) {
      const b = readFileSync(pack);
      const at = Math.floor(b.length / 2);
      b[at] = b[at]! ^ 0xff;
      writeFileSync(pack, b);
    }
    const repo = await KopiaRepository.open({ store: storeOf(dir), password: PASSWORD });
    const before = heapTuningHolders();
    const err = await restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target: temp('kopia-corrupt-') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepositoryCorruptError);
    // A failed restore gives the heap settings back too.
    expect(heapTuningHolders()).toBe(before);
    expect((err as Error).message).toMatch(/^content [0-9a-f]+ in pack p[0-9a-f]+-s[0-9a-f]+ at \d+ does not authenticate: the pack is corrupted$/);
  });

  it('a missing index blob leaves contents without an index: opening or restoring says so', async () => {
    const dir = copy('velero-default');
    for (const index of files(dir, 'xn')) unlinkSync(index);
    const err = await KopiaRepository.open({ store: storeOf(dir), password: PASSWORD }).then(
      async (repo) => restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target: temp('kopia-noindex-') }),
      (e: unknown) => {
        throw e;
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/snapshot [0-9a-f]{32} not found|is not in any index/);
  });

  it('a missing pack is named', async () => {
    const dir = copy('velero-default');
    for (const pack of files(dir, 'p')) unlinkSync(pack);
    const repo = await KopiaRepository.open({ store: storeOf(dir), password: PASSWORD });
    await expect(restoreKopiaSnapshot({ repository: repo, snapshotId: expected['velero-default'].snapshots[0]!, target: temp('kopia-nopack-') })).rejects.toThrow(
      /^pack p[0-9a-f]+-s[0-9a-f]+ holding content [0-9a-f]+ is missing from /,
    );
  });
});
