import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { newDownloadRequest, type DownloadRequest } from '../../../src/api/index.js';
import { downloadRequestStep } from '../../../src/server/download-request-controller.js';
import { downloadRefusal } from '../../../src/server/download/endpoint.js';
import { downloadRequestName, isFetchableUrl, pickServerPod } from '../../../src/server/download/client.js';
import { isRestoreTarget } from '../../../src/server/download/target.js';

const now = new Date('2026-01-01T12:00:00Z');
const request = (status?: DownloadRequest['status']): DownloadRequest => ({
  ...newDownloadRequest({ name: 'b1-123', spec: { target: { kind: 'BackupLog', name: 'b1' } } }),
  ...(status ? { status } : {}),
});

describe('downloadRequestStep', () => {
  it('processes new requests, waits for expiry, deletes expired ones', () => {
    expect(downloadRequestStep(request(), now)).toEqual({ action: 'process' });
    expect(downloadRequestStep(request({ phase: 'New' }), now)).toEqual({ action: 'process' });
    expect(downloadRequestStep(request({ phase: 'Processed', expiration: '2026-01-01T12:10:00Z' }), now)).toEqual({ action: 'wait', ms: 600_000 });
    expect(downloadRequestStep(request({ phase: 'Processed', expiration: '2026-01-01T11:59:00Z' }), now)).toEqual({ action: 'delete' });
  });
});

describe('downloadRefusal', () => {
  it('serves only existing, processed, unexpired requests that found their file', () => {
    expect(downloadRefusal(undefined, now)?.status).toBe(404);
    expect(downloadRefusal(request({ phase: 'New' }), now)?.status).toBe(409);
    expect(downloadRefusal(request({ phase: 'Processed', expiration: '2026-01-01T12:10:00Z' }), now)?.status).toBe(404);
    expect(downloadRefusal(request({ phase: 'Processed', downloadURL: 'http://x', expiration: '2026-01-01T11:00:00Z' }), now)?.status).toBe(410);
    expect(downloadRefusal(request({ phase: 'Processed', downloadURL: 'http://x', expiration: '2026-01-01T12:10:00Z' }), now)).toBeUndefined();
  });
});

describe('download client helpers', () => {
  it('names requests <target>-<uuid>, valid even for long targets', () => {
    expect(downloadRequestName('b1')).toMatch(/^b1-[0-9a-f-]{36}$/);
    expect(downloadRequestName('x'.repeat(253)).length).toBeLessThanOrEqual(253);
  });

  it('tries http(s) URLs directly and everything else through the cluster', () => {
    expect(isFetchableUrl('https://s3.example.com/b/k?X-Amz-Signature=1')).toBe(true);
    expect(isFetchableUrl('http://127.0.0.1:9000/b/k')).toBe(true);
    expect(isFetchableUrl('file:///var/lib/cairn/storage/b/backups/b1/b1-logs.gz')).toBe(false);
  });

  it('picks the newest ready server pod and its health port', () => {
    const pod = (name: string, created: string, ready: boolean, port?: number): V1Pod => ({
      metadata: { name, creationTimestamp: new Date(created) },
      spec: { containers: [{ name: 'cairn', ...(port ? { ports: [{ name: 'health', containerPort: port }] } : {}) }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    });
    expect(pickServerPod([pod('old', '2026-01-01T00:00:00Z', true, 9000), pod('new', '2026-01-02T00:00:00Z', true, 9001), pod('newest', '2026-01-03T00:00:00Z', false)])).toEqual({ name: 'new', port: 9001 });
    expect(pickServerPod([pod('p', '2026-01-01T00:00:00Z', true)])).toEqual({ name: 'p', port: 8085 });
    expect(pickServerPod([])).toBeUndefined();
  });

  it('tells restore targets from backup targets', () => {
    expect(isRestoreTarget('RestoreLog')).toBe(true);
    expect(isRestoreTarget('RestoreVolumeInfo')).toBe(true);
    expect(isRestoreTarget('BackupResults')).toBe(false);
    expect(isRestoreTarget('CSIBackupVolumeSnapshots')).toBe(false);
  });
});
