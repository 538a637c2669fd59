/**
 * The Backup a Schedule makes (the schedule controller, and `backup create --from-schedule`), with Velero's rules:
 *   - named `<schedule>-<yyyyMMddHHmmss>` (UTC);
 *   - spec = the schedule's template (its TTL, hooks, filters, location...);
 *   - labels = the template's `metadata.labels` when it has any, else the Schedule's own labels, plus
 *     `velero.io/schedule-name`;
 *   - annotations = the Schedule's annotations (kubectl's last-applied-configuration excepted: it describes the
 *     Schedule, not the backup);
 *   - with `useOwnerReferencesInBackup: true`, a controller owner reference to the Schedule, so deleting the
 *     Schedule deletes its Backup objects (the garbage collector does; the stored backups stay until their TTL).
 */
import { ApiVersionV1, Labels } from './constants.js';
import type { Backup } from './kinds/backup.js';
import type { Schedule } from './kinds/schedule.js';
import { labelValue } from './names.js';
import { controllerReference, newBackup } from './objects.js';

/** Longest schedule name whose backups' names (`<name>-<14 digits>`) are still valid object names. */
export const MaxScheduleNameLength = 253 - 15;

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** `2025-03-01T02:00:00Z` → `20250301020000`. */
export function scheduleTimestamp(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, '').replace(/[-:T]/g, '');
}

/** Velero's Schedule.TimestampedName. */
export function timestampedName(scheduleName: string, at: Date): string {
  return `${scheduleName}-${scheduleTimestamp(at)}`;
}

export function backupFromSchedule(schedule: Schedule, name: string): Backup {
  const scheduleName = schedule.metadata.name ?? '';
  const templateLabels = schedule.spec.template.metadata?.labels;
  const labels = { ...(templateLabels && Object.keys(templateLabels).length ? templateLabels : (schedule.metadata.labels ?? {})) };
  labels[Labels.ScheduleName] = labelValue(scheduleName);
  const annotations = Object.fromEntries(Object.entries(schedule.metadata.annotations ?? {}).filter(([k]) => k !== LAST_APPLIED));
  return newBackup({
    namespace: schedule.metadata.namespace ?? '',
    name,
    labels,
    ...(Object.keys(annotations).length ? { annotations } : {}),
    ...(schedule.spec.useOwnerReferencesInBackup === true
      ? { ownerReferences: [controllerReference({ apiVersion: ApiVersionV1, kind: 'Schedule', metadata: schedule.metadata })] }
      : {}),
    spec: structuredClone(schedule.spec.template),
  });
}
