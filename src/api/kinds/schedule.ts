/** velero.io/v1 Schedule (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { AgeColumn, defineKind } from '../meta.js';
import { Nullable, StringEnum, Timestamp, namedValues } from '../schema.js';
import { BackupSpec } from './backup.js';

export const SchedulePhases = ['New', 'Enabled', 'FailedValidation'] as const;
export const SchedulePhase = namedValues(SchedulePhases);
export type SchedulePhase = (typeof SchedulePhases)[number];

export const ScheduleSpec = Type.Object(
  {
    template: BackupSpec,
    schedule: Type.String({ description: 'Cron expression ("0 1 * * *") or descriptor ("@every 6h").' }),
    useOwnerReferencesInBackup: Type.Optional(Nullable(Type.Boolean())),
    paused: Type.Optional(Type.Boolean({ description: 'No backups are made while true.' })),
    skipImmediately: Type.Optional(Type.Boolean({ description: 'Skip the backup due right after unpausing.' })),
  },
  { description: 'When to back up and what each backup contains.' },
);
export type ScheduleSpec = Static<typeof ScheduleSpec>;

export const ScheduleStatus = Type.Object({
  phase: Type.Optional(StringEnum(SchedulePhases)),
  lastBackup: Type.Optional(Timestamp({ description: 'When the last backup was made.' })),
  lastSkipped: Type.Optional(Timestamp({ description: 'When a backup was last skipped.' })),
  validationErrors: Type.Optional(Type.Array(Type.String())),
});
export type ScheduleStatus = Static<typeof ScheduleStatus>;

export const ScheduleKind = defineKind({
  kind: 'Schedule',
  description: 'A Schedule creates Backups from a template on a cron schedule.',
  spec: ScheduleSpec,
  status: ScheduleStatus,
  emptySubresources: true,
  printerColumns: [
    { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'Status of the schedule' },
    { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', description: 'A Cron expression defining when to run the Backup' },
    { name: 'LastBackup', type: 'date', jsonPath: '.status.lastBackup', description: 'The last time a Backup was run for this schedule' },
    AgeColumn,
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused' },
  ],
});
export type Schedule = Static<typeof ScheduleKind.schema>;
