import { describe, expect, it } from 'vitest';
import { parseBenchArgs, USAGE } from '../../../bench/datapath/args.js';

describe('bench:datapath arguments', () => {
  it('restores into fresh filesystems unless --no-fresh-fs is given, and documents the flag', () => {
    expect(parseBenchArgs([]).freshFs).toBe(true);
    expect(parseBenchArgs(['--no-fresh-fs']).freshFs).toBe(false);
    expect(USAGE).toContain('--no-fresh-fs');
  });
});
