/**
 * A restore's PodVolumeRestores as item operations (`restore-<name>-itemoperations.json.gz`,
 * docs/restore.md): cairn tracks them like asynchronous plugin operations so the Restore shows `WaitingForPluginOperations`
 * while data is restored and a server restart resumes the wait. One operation per PVR (`operationID` `pvr-<pvr name>`), on the pod.
 */
import { OperationPhase, PodVolumeRestorePhase, type PodVolumeRestore, type Restore, type RestoreOperation } from '../../api/index.js';
import { GAVE_UP_ANNOTATION } from './restore-wait.js';
import { restoreTransferOperation } from '../transfer-operations.js';

export const POD_VOLUME_RESTORE_ACTION = 'velero.io/pod-volume-restore';

function operationPhase(pvr: PodVolumeRestore): { phase: OperationPhase; error?: string } {
  const gaveUp = pvr.metadata?.annotations?.[GAVE_UP_ANNOTATION];
  if (gaveUp) return { phase: OperationPhase.Failed, error: gaveUp };
  switch (pvr.status?.phase) {
    case PodVolumeRestorePhase.Completed:
      return { phase: OperationPhase.Completed };
    case PodVolumeRestorePhase.Failed:
      return { phase: OperationPhase.Failed, error: `pod volume restore failed: ${pvr.status.message ?? ''}` };
    case PodVolumeRestorePhase.Canceled:
      return { phase: OperationPhase.Failed, error: `pod volume restore canceled: ${pvr.status.message ?? ''}` };
    case undefined:
    case PodVolumeRestorePhase.New:
      return { phase: OperationPhase.New };
    default:
      return { phase: OperationPhase.InProgress };
  }
}

export function podVolumeRestoreOperations(restore: Restore, pvrs: readonly PodVolumeRestore[]): RestoreOperation[] {
  return pvrs.map((pvr) =>
    restoreTransferOperation(restore, {
      action: POD_VOLUME_RESTORE_ACTION,
      resource: { Group: '', Resource: 'pods', Namespace: pvr.spec.pod.namespace ?? '', Name: pvr.spec.pod.name ?? '' },
      operationID: `pvr-${pvr.metadata?.name ?? ''}`,
      ...operationPhase(pvr),
      status: pvr.status,
      description: `volume ${pvr.spec.volume}`,
      created: (pvr.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp,
    }),
  );
}
