import { describe, expect, it } from 'vitest';
import { FsbUsageError, parseFsbArgs } from '../../../bench/fsb/args.js';
import { renderFsbReport } from '../../../bench/fsb/report.js';
import { scaledMixedDataset } from '../../../bench/fsb/dataset.js';
import { between } from '../../../bench/fsb/timeline.js';

describe('bench:fsb arguments', () => {
  it('defaults to 5 x 50 MiB + 5,000 small files on a fresh cluster', () => {
    expect(parseFsbArgs([])).toEqual({ help: false, bigCount: 5, bigMiB: 50, smallCount: 5000, realMb: 0, reuse: false, keep: false });
    expect(parseFsbArgs(['--real-mb', '1000'])).toMatchObject({ realMb: 1000 });
  });
  it('scales counts, keeps at least one large file, refuses nonsense', () => {
    expect(parseFsbArgs(['--scale', '0.1', '--reuse'])).toMatchObject({ bigCount: 1, smallCount: 500, reuse: true });
    expect(parseFsbArgs(['--big', '2', '--big-mib', '8', '--small', '10'])).toMatchObject({ bigCount: 2, bigMiB: 8, smallCount: 10 });
    expect(() => parseFsbArgs(['--big', 'x'])).toThrow(FsbUsageError);
    expect(() => parseFsbArgs(['--nope'])).toThrow('unknown option --nope');
    expect(() => parseFsbArgs(['--big', '0', '--small', '0'])).toThrow('empty');
  });
});

describe('bench:fsb dataset', () => {
  it('lists the large files first, then small text files of 1-16 KiB, 200 per directory', () => {
    const corpus = Buffer.alloc(64 * 1024, 'a');
    const files = [...scaledMixedDataset(corpus, { bigCount: 2, bigMiB: 1, smallCount: 201 }).files()];
    expect(files.map((f) => f.relPath).slice(0, 3)).toEqual(['large/big01.bin', 'large/big02.bin', 'small/d000/f000.txt']);
    expect(files.at(-1)?.relPath).toBe('small/d001/f000.txt');
    expect(files[0]?.size).toBe(1024 * 1024);
    for (const f of files.slice(2)) expect(f.size).toBeGreaterThanOrEqual(1024);
    for (const f of files.slice(2)) expect(f.size).toBeLessThanOrEqual(16 * 1024);
  });
});

describe('bench:fsb report', () => {
  it('prints the overhead per volume and checks it against 3 s', () => {
    const phases = [{ name: 'created→Accepted', seconds: 0.1 }, { name: 'InProgress→Completed', seconds: undefined }];
    const text = renderFsbReport([
      { step: 'backup', bytes: 100e6, files: 10, dataPathSeconds: 4, clusterSeconds: 5.5, phases, commandSeconds: 7, verified: true },
      { step: 'restore', bytes: 100e6, files: 10, dataPathSeconds: 2, clusterSeconds: 6, phases, commandSeconds: 9, verified: true },
    ]);
    for (const expected of [
      'step     data path s  cluster s  overhead s  data path MB/s  cluster MB/s  whole command s  verified\n',
      'backup          4.00       5.50        1.50            25.0          18.2             7.00       yes\n',
      'PASS  backup: micro-service overhead 1.50 s per volume (target < 3 s)\n',
      'FAIL  restore: micro-service overhead 4.00 s per volume (target < 3 s)\n',
      'step     created→Accepted  InProgress→Completed\n',
    ]) expect(text).toContain(expected);
  });
  it('measures between first sightings of two phases', () => {
    const t = { name: 'x', phase: 'Completed', seen: { created: 1000, Accepted: 1500, Completed: 4000 } };
    expect(between(t, 'created', 'Accepted')).toBe(0.5);
    expect(between(t, 'Prepared', 'Completed')).toBeUndefined();
  });
});
