import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { Repository } from '../../../src/datapath/repository.js';
import { deriveKek, kdfFingerprint, unwrapKeyFile, type KeyFile } from '../../../src/datapath/keys.js';
import { keyFileCachePath, readCachedKeyFile, rememberKeyFile, startEarlyDerivation } from '../../../src/datapath/key-file-cache.js';
import { openRepository } from '../../../src/datapath/cli-support.js';
import { WrongPasswordError } from '../../../src/datapath/errors.js';
import { cleanupTempDirs, FAST_KDF, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

async function newRepository(): Promise<{ dir: string; repo: Repository; keyFile: KeyFile }> {
  const dir = tempDir('kc-repo');
  const repo = await Repository.init({ store: new FilesystemObjectStore({ root: dir, durability: 'none' }), password: PASSWORD, kdf: FAST_KDF });
  return { dir, repo, keyFile: repo.openedWith };
}

describe('the key file cache', () => {
  it('keeps the key file under the cache directory, owner-only, and reads it back', async () => {
    const { keyFile } = await newRepository();
    const cache = tempDir('kc');
    const path = keyFileCachePath(cache, 's3://bucket/prefix?endpoint=http://127.0.0.1:9000');
    expect(path.startsWith(join(cache, 'keys'))).toBe(true);
    expect(path).not.toContain('bucket');
    expect(readCachedKeyFile(path)).toBeUndefined();
    rememberKeyFile(path, keyFile, undefined);
    expect(readCachedKeyFile(path)).toEqual(keyFile);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(cache, 'keys')).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, 'utf8')).not.toContain(PASSWORD);
  });

  it('writes nothing when the same file is kept, and skips a directory it cannot write', async () => {
    const { keyFile } = await newRepository();
    const cache = tempDir('kc');
    const path = keyFileCachePath(cache, '/some/repo');
    rememberKeyFile(path, keyFile, undefined);
    // What the command read from the cache is the file it opened with: nothing is written (a marker stays).
    writeFileSync(path, 'marker');
    rememberKeyFile(path, keyFile, keyFile);
    expect(readFileSync(path, 'utf8')).toBe('marker');
    const blocked = join(tempDir('kc'), 'file');
    writeFileSync(blocked, '');
    expect(() => rememberKeyFile(keyFileCachePath(blocked, '/some/repo'), keyFile, undefined)).not.toThrow();
    const readOnly = tempDir('kc-ro');
    mkdirSync(join(readOnly, 'keys'));
    chmodSync(join(readOnly, 'keys'), 0o500);
    expect(() => rememberKeyFile(keyFileCachePath(readOnly, '/some/repo'), keyFile, undefined)).not.toThrow();
    chmodSync(join(readOnly, 'keys'), 0o700);
    // Nothing half-written is left behind where the write did reach the directory.
    expect(readdirSync(join(cache, 'keys')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('ignores a cache file that is not a key file, or asks for a costlier derivation than cairn starts ahead', async () => {
    const { keyFile } = await newRepository();
    const path = keyFileCachePath(tempDir('kc'), '/some/repo');
    mkdirSync(join(path, '..'), { recursive: true });
    const malformed = [
      '{',
      '[]',
      'null',
      JSON.stringify({ ...keyFile, version: 2 }),
      JSON.stringify({ ...keyFile, data: 1 }),
      JSON.stringify({ ...keyFile, kdf: { ...keyFile.kdf, N: 1000 } }), // not a power of two
      JSON.stringify({ ...keyFile, kdf: { ...keyFile.kdf, N: 1 << 24 } }),
      JSON.stringify({ ...keyFile, kdf: { ...keyFile.kdf, p: 64 } }),
    ];
    for (const bad of malformed) {
      writeFileSync(path, bad);
      expect(readCachedKeyFile(path), bad).toBeUndefined();
    }
  });

  it('uses a derivation started ahead for the same parameters and salt, and derives again when it failed', async () => {
    const { keyFile, repo } = await newRepository();
    const early = startEarlyDerivation(PASSWORD, keyFile);
    expect([...early.keys()]).toEqual([kdfFingerprint(keyFile.kdf)]);
    expect((await unwrapKeyFile(keyFile, PASSWORD, early))?.encryption.equals(repo.keys.encryption)).toBe(true);
    // A key derived ahead from another password is what unwrapping uses: it opens nothing.
    const wrong = new Map([[kdfFingerprint(keyFile.kdf), deriveKek('not the password', keyFile.kdf)]]);
    expect(await unwrapKeyFile(keyFile, PASSWORD, wrong)).toBeUndefined();
    const failed = new Map([[kdfFingerprint(keyFile.kdf), Promise.reject(new Error('scrypt failed'))]]);
    expect((await unwrapKeyFile(keyFile, PASSWORD, failed))?.id.equals(repo.keys.id)).toBe(true);
    // A derivation for another salt is not used.
    const other = new Map([[kdfFingerprint({ ...keyFile.kdf, salt: 'AAAA' }), deriveKek('not the password', keyFile.kdf)]]);
    expect((await unwrapKeyFile(keyFile, PASSWORD, other))?.id.equals(repo.keys.id)).toBe(true);
    expect(startEarlyDerivation(PASSWORD, undefined).size).toBe(0);
  });

  it('opens a repository through the CLI helper, keeping the key file that opened it; a removed key stays refused', async () => {
    const { dir, repo, keyFile } = await newRepository();
    const cache = tempDir('kc');
    const path = keyFileCachePath(cache, dir);
    process.env.CAIRN_REPO_PASSWORD = PASSWORD;
    try {
      const opened = await openRepository({ repo: dir }, { cacheDir: cache });
      expect(opened.config.id).toBe(repo.config.id);
      expect(readCachedKeyFile(path)).toEqual(keyFile);
      // Opened again with the cache in place (its derivation started ahead), and not at all with --no-cache.
      expect((await openRepository({ repo: dir }, { cacheDir: cache })).config.id).toBe(repo.config.id);
      // --no-cache (cacheDir false) reads and writes no cache; the default is cairn's cache directory.
      const home = process.env.XDG_CACHE_HOME;
      const xdg = tempDir('kc-xdg');
      process.env.XDG_CACHE_HOME = xdg;
      try {
        await openRepository({ repo: dir }, { cacheDir: false });
        expect(readdirSync(xdg)).toEqual([]);
        await openRepository({ repo: dir });
        expect(readCachedKeyFile(keyFileCachePath(join(xdg, 'cairn'), dir))).toEqual(keyFile);
      } finally {
        if (home === undefined) delete process.env.XDG_CACHE_HOME;
        else process.env.XDG_CACHE_HOME = home;
      }
      // Rotate: a new password, the old key removed. The cached old key file no longer opens the repository.
      const added = await opened.keyRing.add('new password', FAST_KDF);
      const withNew = await Repository.open({ store: new FilesystemObjectStore({ root: dir, durability: 'none' }), password: 'new password' });
      await withNew.keyRing.remove(opened.keyId);
      await expect(openRepository({ repo: dir }, { cacheDir: cache })).rejects.toBeInstanceOf(WrongPasswordError);
      process.env.CAIRN_REPO_PASSWORD = 'new password';
      await openRepository({ repo: dir }, { cacheDir: cache });
      expect(readCachedKeyFile(path)?.kdf.salt).not.toBe(keyFile.kdf.salt);
      expect(added).toMatch(/^[0-9a-f]+$/);
    } finally {
      delete process.env.CAIRN_REPO_PASSWORD;
    }
  });
});
