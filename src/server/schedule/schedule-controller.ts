/**
 * The Schedule controller: for each Schedule in the install namespace, look at it and its Backups, decide
 * (./schedule-decision.ts), then write what the decision says, in this order: the Schedule's phase, validation
 * errors and a skip taken; the Backup of a due run; `status.lastBackup`. Every step is derived from what is in the
 * cluster, so a server stopped between two steps repeats nothing on its next pass (the run's backup is found by
 * its name). A Schedule is looked at when it changes, when one of its Backups changes (a running one ending lets
 * the due run go), at its next run time, and every minute (Velero's sync period).
 */
import {
  Kinds,
  Labels,
  backupFromSchedule,
  labelValue,
  parseSchedule,
  selectorFor,
  type Backup,
  type Schedule,
  statusTime,
} from '../../api/index.js';
import { customClient } from '../../kube/custom.js';
import { startCustomController, type ObjectKey, type ReconcileResult } from '../../kube/controller.js';
import { isAlreadyExists } from '../../kube/errors.js';
import type { ServerContext, Stoppable } from '../context.js';
import { backupSpecProblems } from '../backup/validation.js';
import { LocationResolver } from '../../storage/locations.js';
import { scheduleDecision, type ScheduleDecision } from './schedule-decision.js';

/** Velero's scheduleSyncPeriod: every schedule is looked at this often whatever happens. */
export const SCHEDULE_SYNC_MS = 60_000;

/** The template's problems, each naming its field: schema, filters and durations, hooks, storage location. */
async function templateProblems(ctx: ServerContext, locations: LocationResolver, raw: Schedule): Promise<string[]> {
  let schedule: Schedule;
  try {
    schedule = parseSchedule(raw);
  } catch (err) {
    return [(err as Error).message];
  }
  const template = schedule.spec.template;
  const problems = backupSpecProblems(template).map((p) => `spec.template: ${p}`);
  if (template.storageLocation) {
    if (!(await locations.get(template.storageLocation))) {
      problems.push(`spec.template.storageLocation: backup storage location "${template.storageLocation}" not found in namespace ${ctx.namespace}`);
    }
  } else if (!(await locations.defaultLocation(ctx.config.defaultBackupLocation))) {
    problems.push(`spec.template.storageLocation: not set, and there is no default backup storage location (none is marked default and "${ctx.config.defaultBackupLocation}" does not exist)`);
  }
  return problems;
}

export function scheduleReconciler(ctx: ServerContext) {
  // Read without validation, so a Schedule with a malformed spec can still be marked FailedValidation.
  const schedules = customClient<Schedule>(ctx.kube, Kinds.Schedule, (o) => o as Schedule);
  const backups = customClient<Backup>(ctx.kube, Kinds.Backup, (o) => o as Backup);
  const locations = new LocationResolver(ctx.kube, ctx.namespace);
  const log = ctx.logger;

  /** Phase, validation errors and a skip taken; nothing is written when they are already so. */
  async function writeState(key: ObjectKey, d: ScheduleDecision): Promise<void> {
    await schedules.update(key.namespace, key.name, (s) => {
      const status = s.status ?? {};
      const errors = d.validationErrors.length ? d.validationErrors : undefined;
      const sameErrors = JSON.stringify(status.validationErrors ?? undefined) === JSON.stringify(errors);
      if (status.phase === d.phase && sameErrors && !d.skippedAt) return false;
      s.status = { ...status, phase: d.phase };
      if (errors) s.status.validationErrors = errors;
      else delete s.status.validationErrors;
      if (d.skippedAt) {
        s.status.lastSkipped = statusTime(d.skippedAt);
        s.spec = { ...s.spec, skipImmediately: false };
      }
    });
  }

  async function recordRun(key: ObjectKey, at: Date): Promise<void> {
    await schedules.update(key.namespace, key.name, (s) => {
      s.status = { ...(s.status ?? {}), lastBackup: statusTime(at) };
    });
  }

  return async function reconcile(key: ObjectKey): Promise<ReconcileResult | void> {
    if (key.namespace !== ctx.namespace) return;
    // The time is read before the state: what is decided is what was due when the schedule was looked at.
    const now = ctx.now();
    const schedule = await schedules.get(key.namespace, key.name);
    if (!schedule) return;
    const problems = await templateProblems(ctx, locations, schedule);
    const made = await backups.list(key.namespace, selectorFor({ [Labels.ScheduleName]: labelValue(key.name) }));
    const decision = scheduleDecision({
      schedule,
      now,
      skipImmediatelyDefault: ctx.config.scheduleSkipImmediately,
      templateProblems: problems,
      backups: made.map((b) => ({ name: b.metadata.name ?? '', phase: b.status?.phase })),
    });
    if (decision.phase !== schedule.status?.phase && decision.validationErrors.length) {
      log.info({ schedule: key.name, errors: decision.validationErrors }, 'schedule failed validation');
    }
    await writeState(key, decision);
    if (decision.skippedAt) log.info({ schedule: key.name }, 'skipping the backup due now (skipImmediately)');
    const action = decision.action;
    switch (action.kind) {
      case 'none':
        return;
      case 'wait':
        return { requeueAfterMs: action.ms };
      case 'blocked':
        log.info({ schedule: key.name, running: action.running, due: statusTime(action.due) }, 'a backup of this schedule is still running; the due backup waits for it');
        return { requeueAfterMs: SCHEDULE_SYNC_MS };
      case 'record':
        log.info({ schedule: key.name, backup: action.backupName }, 'the backup of the due run already exists; recording the run');
        await recordRun(key, now);
        return;
      case 'create': {
        const backup = backupFromSchedule(parseSchedule(schedule), action.backupName);
        try {
          await backups.create(backup);
          log.info({ schedule: key.name, backup: action.backupName, due: statusTime(action.slot) }, 'schedule is due; backup created');
        } catch (err) {
          // Another server process (a rolling update) made it a moment ago: the run is done all the same.
          if (!isAlreadyExists((err as { cause?: unknown }).cause ?? err)) throw err;
        }
        await recordRun(key, now);
        return;
      }
    }
  };
}

export async function startScheduleController(ctx: ServerContext): Promise<Stoppable> {
  const schedules = customClient<Schedule>(ctx.kube, Kinds.Schedule, (o) => o as Schedule);
  const backups = customClient<Backup>(ctx.kube, Kinds.Backup, (o) => o as Backup);
  const controller = await startCustomController<Schedule>(ctx, schedules, {
    name: 'schedule',
    reconcile: scheduleReconciler(ctx),
    resyncMs: SCHEDULE_SYNC_MS,
    ...(ctx.clock ? { clock: ctx.clock } : {}),
  });
  // A backup of a schedule that changes (ends, is deleted) wakes its schedule.
  const backupWatch = await startCustomController<Backup>(ctx, backups, {
    name: 'schedule-backups',
    labelSelector: Labels.ScheduleName,
    reconcile: async (key) => {
      const backup = await backups.get(key.namespace, key.name);
      const value = backup?.metadata.labels?.[Labels.ScheduleName];
      const owner = value ? controller.watch.list().find((s) => labelValue(s.metadata?.name ?? '') === value) : undefined;
      if (owner?.metadata?.name) controller.enqueue({ namespace: key.namespace, name: owner.metadata.name });
      else if (!backup) controller.watch.list().forEach((s) => controller.enqueue({ namespace: key.namespace, name: s.metadata?.name ?? '' }));
    },
  });
  return {
    async stop() {
      await backupWatch.stop();
      await controller.stop();
    },
  };
}
