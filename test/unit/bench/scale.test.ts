import { describe, expect, it } from 'vitest';
import { parseScaleArgs, ScaleUsageError } from '../../../bench/scale/args.js';
import { namespaceNames, pool } from '../../../bench/scale/populate.js';
import { renderScaleReport, speedRatio, type ScaleReport, type ServerStep } from '../../../bench/scale/report.js';

const step = (seconds: number, over: Partial<ServerStep> = {}): ServerStep => ({ phase: 'Completed', seconds, startSeconds: 0.2, items: 1000, peakRssBytes: 200e6, ...over });

describe('bench:scale arguments', () => {
  it('defaults to 2,500 namespaces, a restore of 500, with the Velero server', () => {
    expect(parseScaleArgs([])).toEqual({ help: false, namespaces: 2500, restoreNamespaces: 500, velero: true, reuse: false, keep: false, serverEnv: [] });
  });

  it('takes counts and switches', () => {
    expect(parseScaleArgs(['--namespaces', '100', '--restore-namespaces', '10', '--no-velero', '--reuse', '--keep'])).toEqual({ help: false, namespaces: 100, restoreNamespaces: 10, velero: false, reuse: true, keep: true, serverEnv: [] });
    expect(parseScaleArgs(['--server-env', 'NODE_OPTIONS=--max-old-space-size=160', '--server-env', 'MALLOC_ARENA_MAX=2']).serverEnv).toEqual(['NODE_OPTIONS=--max-old-space-size=160', 'MALLOC_ARENA_MAX=2']);
  });

  it('refuses bad counts, a restore larger than the backup and unknown options', () => {
    expect(() => parseScaleArgs(['--namespaces', '0'])).toThrow(ScaleUsageError);
    expect(() => parseScaleArgs(['--namespaces', '1.5'])).toThrow(/positive whole number/);
    expect(() => parseScaleArgs(['--namespaces'])).toThrow(/got nothing/);
    expect(() => parseScaleArgs(['--namespaces', '10', '--restore-namespaces', '11'])).toThrow(/more than --namespaces/);
    expect(() => parseScaleArgs(['--fast'])).toThrow(/unknown option --fast/);
    expect(() => parseScaleArgs(['--server-env', 'no-equals'])).toThrow(/expected NAME=VALUE, got no-equals/);
    expect(() => parseScaleArgs(['--server-env'])).toThrow(/got nothing/);
  });
});

describe('bench:scale namespaces', () => {
  it('names namespaces in order, sortable', () => {
    expect(namespaceNames(3)).toEqual(['scale-00000', 'scale-00001', 'scale-00002']);
  });

  it('works through every item with at most the limit at once', async () => {
    let active = 0;
    let most = 0;
    const seen: number[] = [];
    await pool([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      active++;
      most = Math.max(most, active);
      await new Promise((r) => setImmediate(r));
      seen.push(n);
      active--;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });
});

describe('bench:scale report', () => {
  it('gives cairn speed as the peer time over cairn time, none without a peer', () => {
    expect(speedRatio({ name: 'backup', cairn: step(10), velero: step(30) })).toBe(3);
    expect(speedRatio({ name: 'backup', cairn: step(10) })).toBeUndefined();
  });

  it('prints each server side by side with rates, start times, peaks and the idle memory', () => {
    const report: ScaleReport = {
      title: 'Control plane at scale',
      steps: [{ name: 'backup of 10 namespaces', cairn: step(10), velero: step(25, { startSeconds: undefined, peakRssBytes: 300e6 }) }],
      idle: { cairn: { before: 150e6, after: 180e6 }, velero: { before: 90e6, after: 120e6 } },
    };
    const text = renderScaleReport(report);
    for (const expected of [
      '10.0 s (Completed)',
      '100 items/s',
      '0.20 s',
      '300 MB',
      '2.50x',
      'idle RSS before / after the runs: cairn 150 MB / 180 MB; velero 90 MB / 120 MB',
    ]) expect(text).toContain(expected);
  });
});
