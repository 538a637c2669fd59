import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyModification, prepareDataset, undoModification } from '../../../bench/datapath/dataset-store.js';
import { buildRealManifest, realDataset } from '../../../bench/datapath/real-dataset.js';
import { rotated } from '../../../bench/datapath/scenario.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tree(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

function listAll(dir: string, base = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listAll(join(dir, e.name), `${base}${e.name}/`) : [`${base}${e.name}`],
  );
}

describe('the real dataset', () => {
  it('copies module trees, swaps the upgraded module for the next version and puts everything back', () => {
    const src = mkdtempSync(join(tmpdir(), 'real-src-'));
    const data = mkdtempSync(join(tmpdir(), 'real-data-'));
    dirs.push(src, data);
    const big = 'x'.repeat(6 * 1024 * 1024);
    tree(join(src, 'mod'), {
      'example.com/a@v1.0.0/a.go': 'package a',
      'example.com/lib@v1.0.0/lib.go': big,
      'example.com/lib@v1.0.0/old.go': 'old',
      'example.com/lib@v1.1.0/lib.go': `${big}!`,
      'example.com/lib@v1.1.0/new.go': 'new',
      'cache/download/ignored': 'no',
    });
    tree(join(src, 'nm'), { 'left-pad/index.js': 'module.exports = 1' });
    tree(join(src, 'bin'), { 'tool-v1/tool': 'ELF' });
    const manifest = buildRealManifest({ goModCache: join(src, 'mod'), nodeModules: [join(src, 'nm')], binDir: join(src, 'bin') }, 1e9);
    expect(manifest.upgrade.module).toBe('example.com/lib');
    expect(manifest.files.map((f) => f.rel)).toEqual(['gomod/example.com/a@v1.0.0/a.go', 'app0/node_modules/left-pad/index.js', 'opt/bin/tool-v1/tool']);
    // A small database file keeps the test fast.
    manifest.db.size = 64 * 1024;
    manifest.logs.size = 4096;
    const dataset = realDataset(manifest, Buffer.from('corpus text '.repeat(10_000)));
    const stored = prepareDataset({ dataset, scratchDir: data, corpusSha256: 'c', log: () => undefined });
    const root = stored.root;
    expect(readFileSync(join(root, 'src/vendor/example.com/lib/old.go'), 'utf8')).toBe('old');
    const before = listAll(root).sort();
    const dbBefore = readFileSync(join(root, 'var/lib/db/data.db'));
    const logBefore = readFileSync(join(root, 'var/log/app/app.log'));

    applyModification(data, stored, 1);
    const after = listAll(root);
    expect(after).toContain('src/vendor/example.com/lib/new.go');
    expect(after).not.toContain('src/vendor/example.com/lib/old.go');
    expect(readFileSync(join(root, 'var/log/app/app.log.1'))).toEqual(logBefore);
    const dbAfter = readFileSync(join(root, 'var/lib/db/data.db'));
    expect(dbAfter.length).toBe(dbBefore.length);
    expect(dbAfter.equals(dbBefore)).toBe(false);
    expect(statSync(join(root, 'var/lib/db/data.db')).size).toBe(64 * 1024);

    undoModification(data, stored);
    expect(listAll(root).sort()).toEqual(before);
    expect(readFileSync(join(root, 'var/lib/db/data.db')).equals(dbBefore)).toBe(true);
  });

  it('rotates the tool order between rounds', () => {
    expect(rotated(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotated(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a']);
  });
});
