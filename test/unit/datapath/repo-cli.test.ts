/** The `cairn repo` commands as a user runs them: output on stdout, one clear line on stderr, exit codes. */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Config, Errors } from '@oclif/core';
import RepoInit from '../../../src/commands/repo/init.js';
import RepoBackup from '../../../src/commands/repo/backup.js';
import RepoRestore from '../../../src/commands/repo/restore.js';
import RepoSnapshots from '../../../src/commands/repo/snapshots.js';
import RepoCheck from '../../../src/commands/repo/check.js';
import RepoKey from '../../../src/commands/repo/key.js';
import RepoMaintenance from '../../../src/commands/repo/maintenance.js';
import { cleanupTempDirs, describeTree, tempDir } from './helpers.js';

// The listing cache of `repo backup` goes to a scratch directory, not the home directory's cache.
const cacheHome = process.env.XDG_CACHE_HOME;
beforeAll(() => {
  process.env.XDG_CACHE_HOME = tempDir('xdg-cache');
});
afterAll(() => {
  if (cacheHome === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = cacheHome;
  cleanupTempDirs();
});
afterEach(() => {
  vi.restoreAllMocks();
  delete process.env.CAIRN_REPO_PASSWORD;
  delete process.env.CAIRN_NEW_REPO_PASSWORD;
});

type CommandClass = { run(argv: string[], config: Config): Promise<unknown> };
let config: Config | undefined;

/** Runs a command class in-process; returns what a user would see and the exit code. */
async function run(cmd: CommandClass, argv: string[], password = 'pw'): Promise<{ stdout: string; stderr: string; code: number }> {
  config ??= await Config.load(process.cwd());
  process.env.CAIRN_REPO_PASSWORD = password;
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  let code = 0;
  try {
    await cmd.run(argv, config);
  } catch (err) {
    if (err instanceof Errors.ExitError) code = err.oclif.exit ?? 1;
    else throw err;
  } finally {
    vi.restoreAllMocks();
  }
  process.exitCode = 0;
  return { stdout, stderr, code };
}

describe('cairn repo', () => {
  it('init, backup -o json, snapshots, restore, check: the whole loop', async () => {
    const repo = join(tempDir('cli'), 'repo');
    const src = tempDir('src');
    mkdirSync(join(src, 'd'));
    writeFileSync(join(src, 'd/data.bin'), randomBytes(200_000));
    writeFileSync(join(src, 'hello.txt'), 'hello\n');

    const init = await run(RepoInit, ['--repo', repo]);
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/^created repository [0-9a-f]{32} at file:\/\//);

    const first = await run(RepoBackup, [src, '--repo', repo, '-o', 'json', '--tag', 'app=db', '--description', 'nightly']);
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ parent: null, files: 2, dirs: 1, newFiles: 2, unchangedFiles: 0, errors: [] });
    expect(summary.snapshotId).toMatch(/^[0-9a-f]{64}$/);
    for (const k of ['bytes', 'newBytes', 'reusedBytes', 'storedBytes', 'durationMs']) expect(typeof summary[k]).toBe('number');

    const second = await run(RepoBackup, [src, '--repo', repo]);
    expect(second.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);

    const list = await run(RepoSnapshots, ['--repo', repo, '-o', 'json']);
    const snaps = JSON.parse(list.stdout) as { id: string; tags: Record<string, string>; description?: string; parent?: string }[];
    expect(snaps).toHaveLength(2);
    expect(snaps[0]).toMatchObject({ id: summary.snapshotId, tags: { app: 'db' }, description: 'nightly' });
    expect(snaps[1]!.parent).toBe(summary.snapshotId);
    const table = await run(RepoSnapshots, ['--repo', repo]);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TIME\s+HOST\s+SOURCE\s+FILES\s+SIZE\s+TAGS/);

    const dst = tempDir('dst');
    const restored = await run(RepoRestore, ['latest', dst, '--repo', repo]);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/^restored 2 files, 1 directories/);
    expect(describeTree(dst)).toEqual(describeTree(src));

    const checked = await run(RepoCheck, ['--repo', repo, '--read-data']);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toMatch(/no errors found/);

    const maint = await run(RepoMaintenance, ['--repo', repo, '-o', 'json']);
    expect(JSON.parse(maint.stdout)).toMatchObject({ snapshots: 2 });
  });

  it('backs up under an upload cap, and refuses a cap of zero with nothing written', async () => {
    const repo = join(tempDir('cli'), 'repo');
    const src = tempDir('src');
    writeFileSync(join(src, 'data.bin'), randomBytes(100_000));
    await run(RepoInit, ['--repo', repo]);
    const zero = await run(RepoBackup, [src, '--repo', repo, '--upload-bytes-per-second', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/upload-bytes-per-second/);
    expect(JSON.parse((await run(RepoSnapshots, ['--repo', repo, '-o', 'json'])).stdout)).toEqual([]);
    const capped = await run(RepoBackup, [src, '--repo', repo, '--upload-bytes-per-second', String(64 << 20)]);
    expect(capped.code, capped.stderr).toBe(0);
    const dst = tempDir('dst');
    expect((await run(RepoRestore, ['latest', dst, '--repo', repo])).code).toBe(0);
    expect(describeTree(dst)).toEqual(describeTree(src));
  });

  it('takes a store retry budget, and refuses one that is not a duration', async () => {
    const repo = join(tempDir('cli'), 'repo');
    expect((await run(RepoInit, ['--repo', repo, '--store-retry-timeout', '30s'])).code).toBe(0);
    const bad = await run(RepoSnapshots, ['--repo', repo, '--store-retry-timeout', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--store-retry-timeout.*"soon" is not a duration/);
    expect((await run(RepoSnapshots, ['--repo', repo, '--store-retry-timeout', '0s'])).code).toBe(0);
  });

  it('says "wrong password" in one line with exit code 2', async () => {
    const repo = join(tempDir('cli'), 'repo');
    await run(RepoInit, ['--repo', repo]);
    const res = await run(RepoSnapshots, ['--repo', repo], 'not the password');
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('error: password: wrong password or no key file for it\n');
  });

  it('reports a missing repository, a missing snapshot and a bad URL clearly', async () => {
    const repo = join(tempDir('cli'), 'nothing-here');
    const missing = await run(RepoSnapshots, ['--repo', repo]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^error: no repository at file:\/\/.*\(run 'cairn repo init'\)\n$/);
    await run(RepoInit, ['--repo', repo]);
    const noSnap = await run(RepoRestore, ['abcdef12', tempDir('dst'), '--repo', repo]);
    expect(noSnap.code).toBe(4);
    expect(noSnap.stderr).toBe('error: no snapshot matches abcdef12\n');
    const bad = await run(RepoSnapshots, ['--repo', 'ftp://host/x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --repo: unsupported repository URL scheme/);
    const notDir = await run(RepoBackup, [join(tempDir('x'), 'missing'), '--repo', repo]);
    expect(notDir.code).toBe(2);
    expect(notDir.stderr).toMatch(/^error: DIR: cannot read .*ENOENT/);
  });

  it('rotates passwords with key add and key remove', async () => {
    const repo = join(tempDir('cli'), 'repo');
    await run(RepoInit, ['--repo', repo]);
    const before = JSON.parse((await run(RepoKey, ['list', '--repo', repo, '-o', 'json'])).stdout) as { id: string }[];
    process.env.CAIRN_NEW_REPO_PASSWORD = 'new-pw';
    const added = await run(RepoKey, ['add', '--repo', repo]);
    expect(added.stdout).toMatch(/^added key [0-9a-f]{12}/);
    const removed = await run(RepoKey, ['remove', before[0]!.id.slice(0, 12), '--repo', repo], 'new-pw');
    expect(removed.code).toBe(0);
    expect((await run(RepoSnapshots, ['--repo', repo], 'pw')).code).toBe(2);
    expect((await run(RepoSnapshots, ['--repo', repo], 'new-pw')).code).toBe(0);
  });
});
