import { describe, expect, it } from 'vitest';
import { renderReport, renderTable, targetChecks } from '../../../bench/datapath/report.js';
import type { DatasetInfo, ScenarioResult } from '../../../bench/datapath/results.js';
import type { ToolName } from '../../../bench/datapath/tools/types.js';

const MB = 1e6;

function result(tool: ToolName, figures: { mbps: number; unchanged: number; changed: number; restore: number; rssMb: number }): ScenarioResult {
  const step = (wallSeconds: number) => ({ wallSeconds, cpuSeconds: wallSeconds, othersCpuSeconds: 0, peakRssBytes: 50 * MB });
  return {
    tool,
    store: 'fs',
    dataset: 'mixed',
    status: 'ok',
    first: {
      ...step(1224 / figures.mbps),
      peakRssBytes: figures.rssMb * MB,
      mbPerSecond: figures.mbps,
      filesPerSecond: (figures.mbps * 20020) / 1224,
      rssCheckpoints: [],
      rssTimeline: [],
    },
    repositoryBytesAfterFirst: 1100 * MB,
    unchanged: step(figures.unchanged),
    changed: step(figures.changed),
    restore: { ...step(1224 / figures.restore), mbPerSecond: figures.restore, filesPerSecond: 1000, verified: true },
  };
}

const mixed: DatasetInfo = {
  name: 'mixed',
  title: 'mixed',
  files: 20020,
  bytes: 1224 * MB,
  changedFiles: 1001,
  changedBytes: 60 * MB,
  recipeHash: 'x',
};

describe('benchmark report', () => {
  it('aligns columns: names left, numbers right', () => {
    const text = renderTable(['tool', 'MB/s'], [['restic', '165.0'], ['cairn', '1,024.5']]);
    expect(text.split('\n')).toEqual(['tool       MB/s', '------  -------', 'restic    165.0', 'cairn   1,024.5']);
  });

  it('prints each tool row, the ratios to each peer, and a row for a tool that is missing', () => {
    const results = [
      result('restic', { mbps: 165, unchanged: 1.16, changed: 1.43, restore: 262, rssMb: 134 }),
      result('kopia', { mbps: 200, unchanged: 0.6, changed: 0.9, restore: 250, rssMb: 200 }),
      result('cairn', { mbps: 400, unchanged: 0.5, changed: 0.6, restore: 450, rssMb: 250 }),
    ];
    const text = renderReport([mixed], results);
    expect(text).toContain('restic');
    expect(text).toMatch(/cairn\s+400\.0/);
    expect(text).toContain('cairn/restic: 1st backup 2.42x MB/s, 2.42x files/s, 0.41x CPU');
    expect(text).toContain('cairn/kopia: 1st backup 2.00x MB/s');
    const missing = renderReport([mixed], [{ tool: 'cairn', store: 'fs', dataset: 'mixed', status: 'not available', reason: 'not built' }]);
    expect(missing).toContain('cairn (not available)');
    expect(missing).toContain('cairn: not built');
  });

  it('judges the performance targets PASS, FAIL or N/A', () => {
    const results = [
      result('restic', { mbps: 165, unchanged: 1.16, changed: 1.43, restore: 262, rssMb: 134 }),
      result('kopia', { mbps: 300, unchanged: 0.6, changed: 0.9, restore: 250, rssMb: 200 }),
      result('cairn', { mbps: 340, unchanged: 0.5, changed: 0.8, restore: 450, rssMb: 250 }),
    ];
    const verdicts = Object.fromEntries(targetChecks(results).map((c) => [c.text.split(':').slice(0, 2).join(':'), c.verdict]));
    expect(verdicts['mixed/fs: first backup MB/s >= 2.0x restic']).toBe('PASS');
    expect(verdicts['mixed/fs: first backup MB/s >= 1.2x kopia']).toBe('FAIL');
    expect(verdicts['mixed/fs: unchanged re-run time <= 0.5x restic']).toBe('PASS');
    expect(verdicts['mixed/fs: 5%-changed run time <= 0.5x restic']).toBe('FAIL');
    expect(verdicts['mixed/fs: restore MB/s >= 1.5x restic']).toBe('PASS');
    expect(verdicts['mixed/fs: first backup peak RSS <= 2x restic']).toBe('PASS');
    expect(verdicts['mixed/s3: MinIO']).toBe('N/A');
  });
});
