/**
 * The asynchronous operations item actions start (Velero's BackupItemAction and RestoreItemAction v2): on each pass
 * the action is asked for the progress of each operation still New or InProgress, as Velero's operations
 * controllers do: the counts, units, description and times are copied in; a completed operation becomes Completed,
 * or Failed with the plugin's error; one past the itemOperationTimeout is cancelled and Failed ("Asynchronous action
 * timed out"); one that cannot be asked (no such action, the call fails) is Failed with why. New becomes InProgress
 * once the plugin reports a start time. Errors read as Velero's "<error>, plugin: <name>". The caller stores the
 * operations in the item-operations file, so `describe --details` shows their progress.
 */
import { operationTime, type BackupOperation, type OperationStatus, type RestoreOperation } from '../api/index.js';
import type { Logger } from '../base/logger.js';
import type { OperationProgress } from '../plugins/item-actions/types.js';
import { POD_VOLUME_BACKUP_ACTION } from './podvolume/backup-tracking.js';
import { CSI_PVC_BACKUP_ACTION } from './datamover/backup-tracking.js';
import { CSI_VOLUME_SNAPSHOT_BACKUP_ACTION } from './csi/snapshot-objects.js';

export const TIMED_OUT_OPERATION = 'Asynchronous action timed out';

/**
 * Operations recorded for PodVolumeBackups, DataUploads and CSI VolumeSnapshots are tracked from those objects, not
 * by asking a plugin.
 */
const TRACKED_ELSEWHERE: ReadonlySet<string> = new Set([POD_VOLUME_BACKUP_ACTION, CSI_PVC_BACKUP_ACTION, CSI_VOLUME_SNAPSHOT_BACKUP_ACTION]);

export function isPluginOperation(op: BackupOperation): boolean {
  return !TRACKED_ELSEWHERE.has(op.spec.backupItemAction);
}

type Operation = BackupOperation | RestoreOperation;

export function actionOf(op: Operation): string {
  return 'backupItemAction' in op.spec ? op.spec.backupItemAction : op.spec.restoreItemAction;
}

export function isOperationPending(op: Operation): boolean {
  const phase = op.status.phase ?? 'New';
  return phase === 'New' || phase === 'InProgress';
}

/** What an action that starts operations answers; `owner` is the Backup or Restore. */
export interface OperationsAction<Owner> {
  progress?(operationID: string, owner: Owner): Promise<OperationProgress>;
  cancel?(operationID: string, owner: Owner): Promise<void>;
}

export interface OperationsState<Op extends Operation> {
  operations: Op[];
  /** Whether anything in `operations` differs from what was given (it should be stored again). */
  changed: boolean;
  pending: number;
  completed: number;
  failed: number;
  /** Failures found in this pass, in Velero's words. */
  errors: string[];
}

export interface CheckOperationsOptions<Op extends Operation, Owner> {
  operations: readonly Op[];
  owner: Owner;
  /** The action that started an operation, by name (undefined when the server has no such action now). */
  actionFor: (name: string) => Promise<OperationsAction<Owner> | undefined>;
  /** Velero's kind of such actions, for the "unable to get" message. */
  kind: 'BackupItemActionV2' | 'RestoreItemActionV2';
  timeoutMs: number;
  now: Date;
  log: Logger;
}

export function operationError(message: string, action: string): string {
  return `${message ? `${message}, ` : ''}plugin: ${action}`;
}

function withProgress(status: OperationStatus, p: OperationProgress): OperationStatus {
  const out: OperationStatus = { ...status, nCompleted: p.nCompleted, nTotal: p.nTotal, operationUnits: p.operationUnits, description: p.description };
  if (p.started) out.started = operationTime(p.started);
  if (p.updated) out.updated = operationTime(p.updated);
  return out;
}

export async function checkOperations<Op extends Operation, Owner>(opts: CheckOperationsOptions<Op, Owner>): Promise<OperationsState<Op>> {
  const out: Op[] = [];
  const errors: string[] = [];
  let changed = false;
  for (const original of opts.operations) {
    let status: OperationStatus = original.status;
    if (isOperationPending(original)) {
      const name = actionOf(original);
      const id = original.spec.operationID;
      const fail = (message: string) => {
        status = { ...status, phase: 'Failed', error: message };
        errors.push(operationError(message, name));
      };
      try {
        const action = await opts.actionFor(name);
        if (!action?.progress) {
          fail(`unable to get valid ${opts.kind} for "${name}"`);
        } else {
          const progress = await action.progress(id, opts.owner);
          status = withProgress(status, progress);
          const created = Date.parse(status.created ?? '') || opts.now.getTime();
          if (progress.completed) {
            if (progress.error) fail(progress.error);
            else status = { ...status, phase: 'Completed' };
          } else if (created + opts.timeoutMs < opts.now.getTime()) {
            await action.cancel?.(id, opts.owner).catch((err: unknown) => {
              opts.log.warn({ action: name, operationID: id, err: (err as Error).message }, 'cancelling a timed-out operation failed');
            });
            opts.log.warn({ action: name, operationID: id, timeoutMs: opts.timeoutMs }, 'asynchronous operation timed out; cancelled it');
            fail(TIMED_OUT_OPERATION);
          } else if ((status.phase ?? 'New') === 'New' && status.started) {
            status = { ...status, phase: 'InProgress' };
          }
        }
      } catch (err) {
        fail((err as Error).message);
      }
      if (JSON.stringify(status) !== JSON.stringify(original.status)) changed = true;
    }
    out.push({ ...original, status });
  }
  const phase = (o: Op) => o.status.phase ?? 'New';
  return {
    operations: out,
    changed,
    pending: out.filter(isOperationPending).length,
    completed: out.filter((o) => phase(o) === 'Completed').length,
    failed: out.filter((o) => phase(o) === 'Failed').length,
    errors,
  };
}

/** The errors failed operations put in the results (the same on every pass, so they can be merged once). */
export function failedOperationErrors(operations: readonly Operation[]): string[] {
  return operations.filter((o) => o.status.phase === 'Failed').map((o) => operationError(o.status.error ?? '', actionOf(o)));
}

export interface CancelOperationsOptions<Op extends Operation, Owner> {
  operations: readonly Op[];
  owner: Owner;
  actionFor: (name: string) => Promise<OperationsAction<Owner> | undefined>;
  log: Logger;
}

/**
 * A canceled backup's or restore's plugin operations still New or InProgress: each action is asked to cancel its
 * operation (as Velero asks one past its timeout), so a plugin's long-running work stops with its owner. A failure
 * is logged and passed over: the owner ends canceled whatever the plugin answers. Returns the operations asked.
 */
export async function cancelPendingOperations<Op extends Operation, Owner>(opts: CancelOperationsOptions<Op, Owner>): Promise<string[]> {
  const asked: string[] = [];
  for (const op of opts.operations.filter(isOperationPending)) {
    const name = actionOf(op);
    const id = op.spec.operationID;
    try {
      const action = await opts.actionFor(name);
      if (!action?.cancel) {
        opts.log.warn({ action: name, operationID: id }, 'cannot cancel the operation of a canceled run: no such action, or it cannot cancel');
        continue;
      }
      await action.cancel(id, opts.owner);
      asked.push(id);
      opts.log.info({ action: name, operationID: id }, 'asked the plugin to cancel the operation of a canceled run');
    } catch (err) {
      opts.log.warn({ action: name, operationID: id, err: (err as Error).message }, 'cancelling the operation of a canceled run failed');
    }
  }
  return asked;
}
