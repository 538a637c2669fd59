import { describe, expect, it } from 'vitest';
import { DatamoverUsageError, parseDatamoverArgs } from '../../../bench/datamover/args.js';
import { CHANGED_WINDOW, incrementalChange, SMALL_FILE_STRIDE } from '../../../bench/datamover/change.js';
import { ratio, renderDatamoverReport, type DatamoverStep } from '../../../bench/datamover/report.js';
import type { GeneratedFile } from '../../../bench/datapath/datasets.js';
import { scaledMixedDataset } from '../../../bench/fsb/dataset.js';

const bytesOf = (f: GeneratedFile): Buffer => Buffer.concat([...f.chunks()]);

describe('bench:datamover arguments', () => {
  it("takes bench:fsb's options, so both benches can measure the same volume", () => {
    expect(parseDatamoverArgs([])).toEqual({ help: false, bigCount: 5, bigMiB: 50, smallCount: 5000, realMb: 0, reuse: false, keep: false });
    expect(() => parseDatamoverArgs(['--real-mb', '1000'])).toThrow('--real-mb is bench:fsb\'s alone');
    expect(parseDatamoverArgs(['--scale', '0.2', '--reuse', '--keep'])).toMatchObject({ bigCount: 1, smallCount: 1000, reuse: true, keep: true });
  });
  it('refuses unknown options and an empty volume with its own usage error', () => {
    expect(() => parseDatamoverArgs(['--nope'])).toThrow(DatamoverUsageError);
    expect(() => parseDatamoverArgs(['--big', '0', '--small', '0'])).toThrow('empty');
  });
});

describe('bench:datamover incremental change', () => {
  const corpus = Buffer.alloc(64 * 1024, 'text ');
  const dataset = scaledMixedDataset(corpus, { bigCount: 2, bigMiB: 3, smallCount: 45 });
  const base = [...dataset.files()];

  it('rewrites the middle MiB of the first large file and appends a line to every 20th small file', () => {
    const change = incrementalChange(base);
    expect(change.files.map((f) => f.relPath)).toEqual(['large/big01.bin', 'small/d000/f000.txt', 'small/d000/f020.txt', 'small/d000/f040.txt']);
    expect(change.changedFiles).toBe(4);
    expect(SMALL_FILE_STRIDE).toBe(20);

    const before = bytesOf(base[0]!);
    const after = bytesOf(change.files[0]!);
    expect(after.length).toBe(before.length);
    const at = (before.length - CHANGED_WINDOW) / 2;
    expect(after.subarray(0, at).equals(before.subarray(0, at))).toBe(true);
    expect(after.subarray(at + CHANGED_WINDOW).equals(before.subarray(at + CHANGED_WINDOW))).toBe(true);
    expect(after.subarray(at, at + CHANGED_WINDOW).equals(before.subarray(at, at + CHANGED_WINDOW))).toBe(false);

    const small = bytesOf(change.files[1]!);
    const smallBase = bytesOf(base[2]!);
    expect(small.subarray(0, smallBase.length).equals(smallBase)).toBe(true);
    expect(change.addedBytes).toBe(3 * (small.length - smallBase.length));
    expect(change.changedBytes).toBe(change.files.reduce((n, f) => n + bytesOf(f).length, 0));
  });

  it('is the same change on every run', () => {
    const a = incrementalChange(base).files.map((f) => bytesOf(f).toString('base64'));
    const b = incrementalChange(dataset.files()).files.map((f) => bytesOf(f).toString('base64'));
    expect(a).toEqual(b);
  });
});

describe('bench:datamover report', () => {
  const phases = [{ name: 'created→Accepted', seconds: 0.2 }, { name: 'InProgress→Completed', seconds: undefined }];
  const steps: DatamoverStep[] = [
    { step: 'first backup', bytes: 100e6, files: 10, dataPathSeconds: 2, kopiaSeconds: 5, dataMoverSeconds: 4, phases, commandSeconds: 6, verified: true },
    { step: 'incremental backup', bytes: 100e6, files: 10, dataPathSeconds: 0.5, kopiaSeconds: 1, dataMoverSeconds: 2.5, phases, commandSeconds: 4, verified: true },
    { step: 'restore', bytes: 100e6, files: 10, dataPathSeconds: 2, dataMoverSeconds: 8, phases, commandSeconds: 10, verified: false },
  ];

  it('prints the data mover figure, the data path and kopia figures and the ratios per step', () => {
    const text = renderDatamoverReport(steps, 'kopia: kopia 0.23.1, zstd');
    for (const expected of [
      'step                data mover s  data path s  kopia s  data mover MB/s  data path MB/s  kopia MB/s  vs data path  vs kopia  whole command s  verified\n',
      'first backup                4.00         2.00     5.00             25.0            50.0        20.0         0.50x     1.25x             6.00       yes\n',
      'restore                     8.00         2.00        -             12.5            50.0           -         0.25x         -            10.00        NO\n',
      'kopia: kopia 0.23.1, zstd\n',
      'incremental backup: data mover 40.0 MB/s; data path alone 200.0 MB/s (0.20x), kopia alone 100.0 MB/s (0.40x)\n',
      'restore: data mover 12.5 MB/s; data path alone 50.0 MB/s (0.25x)\n',
      'step                created→Accepted  InProgress→Completed\n',
    ]) expect(text).toContain(expected);
  });

  it('has no ratio without a reference figure or for a step that took no time', () => {
    expect(ratio(1, 0)).toBeUndefined();
    expect(ratio(undefined, 2)).toBeUndefined();
    expect(ratio(1, 2)).toBe(0.5);
  });
});
