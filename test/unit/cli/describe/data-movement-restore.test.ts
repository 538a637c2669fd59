import { describe, expect, it } from 'vitest';
import type { DataDownload, Restore } from '../../../../src/api/index.js';
import type { RestoreVolumeInfo } from '../../../../src/api/volume-info.js';
import { describePlainRestore, waitingRestore } from './fixtures.js';

function dd(name: string, pvc: string, status: NonNullable<DataDownload['status']>): DataDownload {
  return {
    apiVersion: 'velero.io/v2alpha1',
    kind: 'DataDownload',
    metadata: { name, namespace: 'velero' },
    spec: { targetVolume: { pvc, pv: '', namespace: 'app' }, backupStorageLocation: 'default', snapshotID: `snap-${pvc}`, sourceNamespace: 'app', datamover: 'velero', operationTimeout: '4h0m0s' },
    status,
  } as DataDownload;
}

const dds: DataDownload[] = [
  dd('app-restore-b2c4d', 'data-web-1', { phase: 'InProgress', node: 'node-2', startTimestamp: '2025-10-01T10:00:06Z', progress: { totalBytes: 2000, bytesDone: 1337 } }),
  dd('app-restore-x7k2p', 'data-web-0', { phase: 'Completed', node: 'node-1', startTimestamp: '2025-10-01T10:00:05Z', completionTimestamp: '2025-10-01T10:00:20Z', progress: { totalBytes: 41943040, bytesDone: 41943040 } }),
  dd('app-restore-q9z4m', 'data-web-2', {}),
  dd('app-restore-m4n5p', 'data-web-3', { phase: 'Failed', node: 'node-1', message: 'restore PVC was not bound' }),
];

/** The lines of one section: from its heading to the next blank line. */
function section(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(heading));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l === '');
  return lines.slice(start, end < 0 ? undefined : end);
}

describe('restore describe: data downloads', () => {
  it('without --details: counts per phase in Velero order', () => {
    const text = describePlainRestore({ restore: waitingRestore(), details: false, dataDownloads: dds });
    expect(section(text, 'Data Movement Restores')).toEqual([
      'Data Movement Restores (specify --details for more information):',
      '  Completed:    1',
      '  Failed:       1',
      '  In Progress:  1',
      '  New:          1',
    ]);
    expect(text).not.toContain('Data Download Details');
  });

  it('with --details: claims per phase, then each claim with its DataDownload, phase, node and live progress', () => {
    const text = describePlainRestore({ restore: waitingRestore(), details: true, dataDownloads: dds, resourceList: { ok: true, value: {} } });
    expect(section(text, 'Data Movement Restores')).toEqual([
      'Data Movement Restores:',
      '  Completed:',
      '    app/data-web-0',
      '  Failed:',
      '    app/data-web-3',
      '  In Progress:',
      '    app/data-web-1',
      '  New:',
      '    app/data-web-2',
    ]);
    const details = section(text, 'Data Download Details');
    expect(details.join('\n')).toBe(
      [
        'Data Download Details:',
        '  app/data-web-0:',
        '    Data Download:  app-restore-x7k2p',
        '    Phase:          Completed',
        '    Node:           node-1',
        '    Snapshot ID:    snap-data-web-0',
        '    Size (bytes):   41943040',
        '    Started:        2025-10-01 10:00:05 +0000 UTC',
        '    Completed:      2025-10-01 10:00:20 +0000 UTC',
        '  app/data-web-1:',
        '    Data Download:  app-restore-b2c4d',
        '    Phase:          In Progress',
        '    Node:           node-2',
        '    Snapshot ID:    snap-data-web-1',
        '    Progress:       1337 of 2000 bytes (66%)',
        '    Started:        2025-10-01 10:00:06 +0000 UTC',
        '  app/data-web-2:',
        '    Data Download:  app-restore-q9z4m',
        '    Phase:          New',
        '    Node:           <none>',
        '    Snapshot ID:    snap-data-web-2',
        '  app/data-web-3:',
        '    Data Download:  app-restore-m4n5p',
        '    Phase:          Failed',
        '    Node:           node-1',
        '    Snapshot ID:    snap-data-web-3',
        '    Message:        restore PVC was not bound',
      ].join('\n'),
    );
  });

  it('no section without DataDownloads; the CSI section shows the data mover of moved volumes with --details', () => {
    const info: RestoreVolumeInfo[] = [
      {
        pvcName: 'data-web-0',
        pvcNamespace: 'app',
        restoreMethod: 'CSISnapshot',
        snapshotDataMoved: true,
        snapshotDataMovementInfo: { dataMover: 'velero', uploaderType: 'kopia', snapshotHandle: 's', operationID: 'dd-1.2', size: 1, Phase: 'Completed' },
      },
    ];
    const done = { ...waitingRestore(), status: { phase: 'Completed' } } as Restore;
    const brief = describePlainRestore({ restore: done, details: false, dataDownloads: [], volumeInfo: { ok: true, value: info } });
    expect(brief).not.toContain('Data Movement Restores');
    expect(section(brief, 'CSI Snapshot Restores')).toEqual(['CSI Snapshot Restores:', '  app/data-web-0:', '    Data Movement: specify --details for more information']);
    const full = describePlainRestore({ restore: done, details: true, volumeInfo: { ok: true, value: info }, resourceList: { ok: true, value: {} } });
    expect(section(full, 'CSI Snapshot Restores')).toEqual([
      'CSI Snapshot Restores:',
      '  app/data-web-0:',
      '    Data Movement:',
      '      Operation ID: dd-1.2',
      '      Data Mover: velero',
      '      Uploader Type: kopia',
    ]);
  });

  it('lists each volume whose backup failed, with why it was not restored', () => {
    const info: RestoreVolumeInfo[] = [
      {
        pvcName: 'data-web',
        pvcNamespace: 'app',
        restoreMethod: 'PodVolumeRestore',
        snapshotDataMoved: false,
        pvrInfo: { uploaderType: 'kopia', volumeName: 'data', podName: 'web', podNamespace: 'app', Phase: 'Failed' },
        notRestored: 'its backup (PodVolumeBackup b1-x) failed: data path backup failed: s3: ECONNREFUSED',
      },
      { pvcName: 'db', pvcNamespace: 'app', restoreMethod: 'CSISnapshot', snapshotDataMoved: true, notRestored: 'its data movement (operation du-1) was canceled' },
    ];
    const done = { ...waitingRestore(), status: { phase: 'PartiallyFailed' } } as Restore;
    const text = describePlainRestore({ restore: done, details: false, volumeInfo: { ok: true, value: info } });
    expect(section(text, 'Volumes Not Restored')).toEqual([
      'Volumes Not Restored:',
      '  app/web: volume data:             not restored: its backup (PodVolumeBackup b1-x) failed: data path backup failed: s3: ECONNREFUSED',
      '  app/db: persistent volume claim:  not restored: its data movement (operation du-1) was canceled',
    ]);
    expect(section(text, 'CSI Snapshot Restores')).toEqual(['CSI Snapshot Restores: <none included>']);
  });
});

