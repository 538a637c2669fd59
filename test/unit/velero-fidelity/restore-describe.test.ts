/**
 * Golden: `restore describe` of a finished restore against Velero 1.17's text for the same objects
 * (pkg/cmd/util/output/restore_describer.go through Go's tabwriter). A finished restore always carries
 * `hookStatus` (Velero's finalizer sets it), so the Hooks lines are there, with the literal space before the tab
 * that widens their column; the blank before them doubles because the item-operations block above is empty.
 */
import { describe, expect, it } from 'vitest';
import type { HookStatus, PodVolumeRestore, Restore } from '../../../src/api/index.js';
import { colours } from '../../../src/cli/colour.js';
import { describeRestore } from '../../../src/cli/describe/restore.js';
import { finishedHookStatus } from '../../../src/server/restore/restore-controller.js';

function restore(hookStatus: HookStatus | undefined): Restore {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Restore',
    metadata: { name: 'r1', namespace: 'velero' },
    spec: { backupName: 'b1', itemOperationTimeout: '4h0m0s' },
    status: {
      phase: 'Completed',
      startTimestamp: '2025-10-01T10:15:00Z',
      completionTimestamp: '2025-10-01T10:15:40Z',
      progress: { totalItems: 12, itemsRestored: 12 },
      ...(hookStatus ? { hookStatus } : {}),
    },
  };
}

const pvr: PodVolumeRestore = {
  apiVersion: 'velero.io/v1',
  kind: 'PodVolumeRestore',
  metadata: { name: 'r1-x', namespace: 'velero' },
  spec: { pod: { namespace: 'app', name: 'web-0' }, volume: 'data', backupStorageLocation: 'default', repoIdentifier: '', uploaderType: 'kopia', snapshotID: 's1', sourceNamespace: 'app' },
  status: { phase: 'Completed' },
} as PodVolumeRestore;

const EXPECTED = `Name:         r1
Namespace:    velero
Labels:       <none>
Annotations:  <none>

Phase:                       Completed
Total items to be restored:  12
Items restored:              12

Started:    2025-10-01 10:15:00 +0000 UTC
Completed:  2025-10-01 10:15:40 +0000 UTC

Backup:  b1

Namespaces:
  Included:  all namespaces found in the backup
  Excluded:  <none>

Resources:
  Included:        *
  Excluded:        <none>
  Cluster-scoped:  auto

Namespace mappings:  <none>

Label selector:  <none>

Or label selector:  <none>

Restore PVs:  auto

kopia Restores (specify --details for more information):
  Completed:  1

CSI Snapshot Restores: <none included>

Existing Resource Policy:   <none>
ItemOperationTimeout:       4h0m0s

Preserve Service NodePorts:  auto


HooksAttempted:   HOOKS_ATTEMPTED
HooksFailed:      HOOKS_FAILED
`;

describe('restore hookStatus and its describe lines', () => {
  it('a finished restore without hooks carries hookStatus {} (zero counts left out, as omitempty does)', () => {
    expect(finishedHookStatus(undefined)).toEqual({});
    expect(finishedHookStatus(null)).toEqual({});
    expect(finishedHookStatus({ hooksAttempted: 0, hooksFailed: 0 })).toEqual({});
  });

  it('keeps the counts whatever ran the hooks wrote', () => {
    expect(finishedHookStatus({ hooksAttempted: 3, hooksFailed: 1 })).toEqual({ hooksAttempted: 3, hooksFailed: 1 });
  });

  it.each([
    [{}, '0', '0'],
    [{ hooksAttempted: 3, hooksFailed: 1 }, '3', '1'],
  ])('describe prints the Hooks lines as Velero does (%j)', (hookStatus, attempted, failed) => {
    const text = describeRestore({
      restore: restore(finishedHookStatus(hookStatus)),
      details: false,
      colours: colours(false),
      cli: 'velero',
      volumeInfo: { ok: true, value: [] },
      podVolumeRestores: [pvr],
    });
    expect(text).toBe(EXPECTED.replace('HOOKS_ATTEMPTED', attempted).replace('HOOKS_FAILED', failed));
  });

  it('a restore that has not finished has no Hooks lines', () => {
    const r = restore(undefined);
    const text = describeRestore({ restore: r, details: false, colours: colours(false), cli: 'velero', podVolumeRestores: [] });
    expect(text).not.toContain('HooksAttempted');
  });
});
