import { describe, expect, it } from 'vitest';
import { parallelFilesDownload } from '../../../../src/agent/microservice/pod-volume.js';
import { isCancelRequested } from '../../../../src/agent/microservice/watch.js';
import type { PodVolumeRestore } from '../../../../src/api/index.js';

describe('reading the PVB/PVR', () => {
  it('acts on spec.cancel only once the data path may run (InProgress or Canceling)', () => {
    const obj = (phase: string | undefined, cancel: boolean | undefined) => ({ spec: { cancel }, status: phase ? { phase } : undefined });
    expect(isCancelRequested(obj('InProgress', true))).toBe(true);
    expect(isCancelRequested(obj('Canceling', true))).toBe(true);
    expect(isCancelRequested(obj('InProgress', false))).toBe(false);
    expect(isCancelRequested(obj('Prepared', true))).toBe(false);
    expect(isCancelRequested(obj(undefined, true))).toBe(false);
    expect(isCancelRequested(undefined)).toBe(false);
  });

  it('takes ParallelFilesDownload from the uploader settings when it is a positive integer', () => {
    const pvr = (settings: Record<string, string> | null | undefined) => ({ spec: { uploaderSettings: settings } }) as unknown as PodVolumeRestore;
    expect(parallelFilesDownload(pvr({ ParallelFilesDownload: '8' }))).toEqual({ concurrency: 8 });
    expect(parallelFilesDownload(pvr({ ParallelFilesDownload: '0' }))).toEqual({});
    expect(parallelFilesDownload(pvr({ ParallelFilesDownload: 'many' }))).toEqual({});
    expect(parallelFilesDownload(pvr(null))).toEqual({});
    expect(parallelFilesDownload(pvr(undefined))).toEqual({});
  });
});
