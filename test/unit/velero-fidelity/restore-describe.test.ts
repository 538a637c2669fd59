/**
 * Golden: `restore describe` of a finished restore against Velero 1.17's text for the same objects
 * (pkg/cmd/util/output/restore_describer.go through Go's tabwriter). A finished restore always carries
 * `hookStatus` (Velero's finalizer sets it), so the Hooks lines are there, with the literal space before the tab
 * that widens their column; the blank before them doubles because the item-operations block above is empty.
 */
import { describe, expect, it } from 'vitest';
import type { HookStatus, Restore } from '../../../src/api/index.js';
import { finishedHookStatus } from '../../../src/server/restore/restore-controller.js';
import { nginxPodVolumeRestore, nginxRestore, restoreExample } from '../cli/describe/docs-examples.js';
import { describePlainRestore } from '../cli/describe/fixtures.js';

/** The docs example's restore, carrying `hookStatus` as given (none: Velero's finalizer has not finished it yet). */
function restore(hookStatus: HookStatus | undefined): Restore {
  const r = nginxRestore();
  delete r.status?.hookStatus;
  if (hookStatus) r.status = { ...r.status, hookStatus };
  return r;
}

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
    [{}, 0, 0],
    [{ hooksAttempted: 3, hooksFailed: 1 }, 3, 1],
  ])('describe prints the Hooks lines as Velero does (%j)', (hookStatus, attempted, failed) => {
    const text = describePlainRestore({
      restore: restore(finishedHookStatus(hookStatus)),
      details: false,
      cli: 'velero',
      volumeInfo: { ok: true, value: [] },
      podVolumeRestores: [nginxPodVolumeRestore],
    });
    expect(text).toBe(restoreExample(attempted, failed));
  });

  it('a restore that has not finished has no Hooks lines', () => {
    const r = restore(undefined);
    const text = describePlainRestore({ restore: r, details: false, cli: 'velero' });
    expect(text).not.toContain('HooksAttempted');
  });
});
