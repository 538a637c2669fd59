import { describe, expect, it } from 'vitest';
import { Labels, backupFromSchedule, newSchedule, scheduleTimestamp, timestampedName, type Schedule } from '../../../src/api/index.js';

function schedule(patch: { labels?: Record<string, string>; annotations?: Record<string, string>; templateLabels?: Record<string, string>; owners?: boolean; name?: string } = {}): Schedule {
  const s = newSchedule({
    namespace: 'velero',
    name: patch.name ?? 'nightly',
    ...(patch.labels ? { labels: patch.labels } : {}),
    ...(patch.annotations ? { annotations: patch.annotations } : {}),
    spec: {
      schedule: '0 1 * * *',
      ...(patch.owners !== undefined ? { useOwnerReferencesInBackup: patch.owners } : {}),
      template: { includedNamespaces: ['shop'], ttl: '72h0m0s', ...(patch.templateLabels ? { metadata: { labels: patch.templateLabels } } : {}) },
    },
  });
  return { ...s, metadata: { ...s.metadata, uid: 'uid-s' } };
}

describe('the Backup a Schedule makes', () => {
  it('is named <schedule>-<yyyyMMddHHmmss> in UTC', () => {
    expect(scheduleTimestamp(new Date('2026-03-01T02:03:04.567Z'))).toBe('20260301020304');
    expect(timestampedName('nightly', new Date('2026-12-31T23:59:59Z'))).toBe('nightly-20261231235959');
  });

  it('takes the template as its spec (TTL included) and the schedule-name label', () => {
    const b = backupFromSchedule(schedule({ labels: { team: 'shop' } }), 'nightly-20260301010000');
    expect(b.metadata).toMatchObject({ namespace: 'velero', name: 'nightly-20260301010000', labels: { team: 'shop', [Labels.ScheduleName]: 'nightly' } });
    expect(b.spec).toEqual({ includedNamespaces: ['shop'], ttl: '72h0m0s' });
    expect(b.metadata.ownerReferences).toBeUndefined();
  });

  it("uses the template's labels instead of the schedule's when it has some", () => {
    const b = backupFromSchedule(schedule({ labels: { team: 'shop' }, templateLabels: { tier: 'gold' } }), 'n');
    expect(b.metadata.labels).toEqual({ tier: 'gold', [Labels.ScheduleName]: 'nightly' });
  });

  it("copies the schedule's annotations, not kubectl's record of the schedule", () => {
    const b = backupFromSchedule(schedule({ annotations: { note: 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}' } }), 'n');
    expect(b.metadata.annotations).toEqual({ note: 'x' });
  });

  it('is owned by the schedule with useOwnerReferencesInBackup', () => {
    const b = backupFromSchedule(schedule({ owners: true }), 'n');
    expect(b.metadata.ownerReferences).toEqual([{ apiVersion: 'velero.io/v1', kind: 'Schedule', name: 'nightly', uid: 'uid-s', controller: true }]);
    expect(backupFromSchedule(schedule({ owners: false }), 'n').metadata.ownerReferences).toBeUndefined();
  });

  it('shortens the label value of a long schedule name as Velero shortens names', () => {
    const long = 'a'.repeat(80);
    const value = backupFromSchedule(schedule({ name: long }), `${long}-20260301010000`).metadata.labels?.[Labels.ScheduleName] ?? '';
    expect(value).toHaveLength(63);
  });
});
