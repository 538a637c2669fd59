/**
 * `velero.io/csi-pvc-restorer` for claims whose data the backup moved (issue 7's contract): the claim is created
 * without its old volume, data source and binding annotations, with a `velero.io/dynamic-pv-restore` selector that
 * only the volume the node agent fills and re-binds will match. The DataDownload itself is created by the restore
 * once the claim exists (src/server/datamover/restore-creator.ts). Claims without moved data pass unchanged.
 */
import { dataMovementRestoreAllowed, dynamicPvRestoreLabelValue, movedVolumeFor, rewritePvcForDataDownload } from '../datamover/restore-decision.js';
import type { RestoreItemAction } from '../../plugins/item-actions/types.js';

export const pvcDataMoverRestoreAction: RestoreItemAction = {
  name: 'velero.io/csi-pvc-restorer',
  pluginKind: 'RestoreItemActionV2',
  appliesTo: () => ({ includedResources: ['persistentvolumeclaims'] }),
  async execute(item, ctx) {
    if (!dataMovementRestoreAllowed(ctx.restore)) return { item };
    const fromBackup = ctx.itemFromBackup;
    const moved = movedVolumeFor(ctx.volumeInfos ?? [], fromBackup.metadata.namespace ?? '', fromBackup.metadata.name);
    if (!moved) return { item };
    const value = dynamicPvRestoreLabelValue(item.metadata.namespace ?? '', item.metadata.name);
    ctx.log.info(`Claim ${item.metadata.namespace ?? ''}/${item.metadata.name} gets its data from the data mover (snapshot ${moved.snapshotHandle}); it waits for the volume labelled ${value}`);
    return { item: rewritePvcForDataDownload(item, value) };
  },
};
