import { describe, expect, it } from 'vitest';
import { parseBenchArgs, USAGE } from '../../../bench/datapath/args.js';

describe('bench:datapath arguments', () => {
  it('restores into fresh filesystems unless --no-fresh-fs is given, and documents the flag', () => {
    expect(parseBenchArgs([]).freshFs).toBe(true);
    expect(parseBenchArgs(['--no-fresh-fs']).freshFs).toBe(false);
    expect(USAGE).toContain('--no-fresh-fs');
  });
});

describe('bench:datapath --contended and --real-mb', () => {
  it('runs one busy loop per core unless a count is given, and none without the flag', () => {
    expect(parseBenchArgs([]).contended).toBe(0);
    expect(parseBenchArgs(['--contended']).contended).toBeGreaterThanOrEqual(1);
    expect(parseBenchArgs(['--contended', '3']).contended).toBe(3);
    expect(() => parseBenchArgs(['3'])).toThrow(/unexpected argument/);
  });

  it('sizes the real dataset in MB and keeps it out of --all', () => {
    expect(parseBenchArgs(['--dataset', 'real', '--real-mb', '500']).realBytes).toBe(500e6);
    expect(parseBenchArgs(['--all']).datasets).not.toContain('real');
    expect(() => parseBenchArgs(['--real-mb', '5'])).toThrow(/real-mb/);
  });
});
