/** The zstd level comes from the repository config: new repositories level 1, older ones keep level 3. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openFile, sealFile } from '../../../src/datapath/crypto.js';
import { Repository } from '../../../src/datapath/repository.js';
import { restore } from '../../../src/datapath/restorer.js';
import { backup } from '../../../src/datapath/uploader.js';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { cleanupTempDirs, describeTree, newRepo, PASSWORD, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

/** Real text: this project's own sources, a file each. */
function textTree(): string {
  const src = tempDir('text');
  const dir = join(import.meta.dirname, '../../../src/datapath');
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) writeFileSync(join(src, name), readFileSync(join(dir, name)));
  return src;
}

describe('compression level in the repository config', () => {
  it('is zstd-1 for new repositories; a zstd-3 repository stores smaller text, and both restore the same tree', async () => {
    const src = textTree();
    const fast = await newRepo();
    expect(fast.config.compression).toBe('zstd-1');
    const dense = await newRepo(undefined, { compression: 'zstd-3' });
    const a = await backup({ source: src, repository: fast, workers: 1 });
    const b = await backup({ source: src, repository: dense, workers: 0 });
    expect(b.stats.storedBytes).toBeLessThan(a.stats.storedBytes);
    for (const [repo, snapshotId] of [[fast, a.snapshotId], [dense, b.snapshotId]] as const) {
      const target = tempDir('restore');
      await restore({ repository: repo, snapshotId, target });
      expect(describeTree(target)).toEqual(describeTree(src));
    }
  });

  it('refuses a repository whose config names a compression it does not know, saying which', async () => {
    const root = tempDir('repo');
    const store = new FilesystemObjectStore({ root, durability: 'none' });
    const repo = await newRepo(store);
    const path = join(root, 'config');
    const config = JSON.parse(openFile(repo.keys, 'config', readFileSync(path), 'config').toString()) as Record<string, unknown>;
    writeFileSync(path, sealFile(repo.keys, 'config', Buffer.from(JSON.stringify({ ...config, compression: 'lz77-9' }))));
    await expect(Repository.open({ store, password: PASSWORD })).rejects.toThrow('repository compression "lz77-9" is not supported (this cairn knows zstd-1, zstd-3)');
  });
});
