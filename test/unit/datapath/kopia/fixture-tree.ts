/**
 * The tree test/fixtures/kopia/make-fixtures.sh snapshots, as the tests expect it back: each file's bytes and mode,
 * the symlink's target, the directories (with their modes) and the times the script set.
 */
export interface ExpectedFile {
  bytes: Buffer;
  mode: number;
}

export function patterned(tag: string): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < 10240; i++) lines.push(`${tag.padEnd(12)} line ${String(i).padStart(5, '0')} of patterned..\n`);
  return Buffer.from(lines.join(''));
}

export function expectedTree(tag = ''): { files: Record<string, ExpectedFile>; dirs: Record<string, number>; symlinks: Record<string, string> } {
  return {
    files: {
      'hello.txt': { bytes: Buffer.from('hello kopia\n'), mode: 0o640 },
      'empty.txt': { bytes: Buffer.alloc(0), mode: 0o644 },
      'dir/patterned.bin': { bytes: patterned(tag), mode: 0o644 },
      'dir/zeros-then-tail.bin': { bytes: Buffer.concat([Buffer.alloc(12288), Buffer.from('tail')]), mode: 0o644 },
      'dir/sub/nested.txt': { bytes: Buffer.from('nested\n'), mode: 0o644 },
      'dir/name with spaces ü.txt': { bytes: Buffer.from('spaces and ünïcode\n'), mode: 0o644 },
      'setuid.sh': { bytes: Buffer.from('#!/bin/sh\n'), mode: 0o4755 },
    },
    dirs: { dir: 0o755, 'dir/sub': 0o750, 'empty-dir': 0o755 },
    symlinks: { 'link-to-nested': 'dir/sub/nested.txt' },
  };
}

/** The time the script sets on hello.txt, dir, link-to-nested and empty-dir (UTC on the machine that made them). */
export const FIXED_MTIME_PREFIX = '2024-02-29T12:34:56.123';
