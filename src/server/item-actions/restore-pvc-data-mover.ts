/**
 * `velero.io/csi-pvc-restorer`, Velero's CSI restore action for claims:
 *   - a claim whose data the backup moved is created without its old volume, data source and binding annotations,
 *     with a `velero.io/dynamic-pv-restore` selector that only the volume the node agent fills and re-binds will
 *     match. The DataDownload itself is created by the restore once the claim exists
 *     (src/server/datamover/restore-creator.ts);
 *   - a claim whose CSI snapshot the backup kept gets the restored VolumeSnapshot as its data source
 *     (./restore-csi-snapshot.ts);
 *   - other claims pass unchanged.
 */
import { dataMovementRestoreAllowed, dynamicPvRestoreLabelValue, movedVolumeFor, rewritePvcForDataDownload } from '../datamover/restore-decision.js';
import type { RestoreItemAction } from '../../plugins/item-actions/types.js';
import { restoreClaimFromSnapshot } from './restore-csi-snapshot.js';

export const pvcDataMoverRestoreAction: RestoreItemAction = {
  name: 'velero.io/csi-pvc-restorer',
  pluginKind: 'RestoreItemActionV2',
  appliesTo: () => ({ includedResources: ['persistentvolumeclaims'] }),
  async execute(item, ctx) {
    const fromBackup = ctx.itemFromBackup;
    const moved = dataMovementRestoreAllowed(ctx.restore) ? movedVolumeFor(ctx.volumeInfos ?? [], fromBackup.metadata.namespace ?? '', fromBackup.metadata.name) : undefined;
    if (!moved) {
      const fromSnapshot = restoreClaimFromSnapshot(item, fromBackup, ctx.restore);
      const source = (fromSnapshot?.item.spec as { dataSource?: { name?: string } } | undefined)?.dataSource?.name;
      if (fromSnapshot) ctx.log.info(`Claim ${item.metadata.namespace ?? ''}/${item.metadata.name} ${source ? `is restored from the CSI snapshot ${source}` : 'is restored without its CSI snapshot (restorePVs is false)'}`);
      return fromSnapshot ?? { item };
    }
    const value = dynamicPvRestoreLabelValue(item.metadata.namespace ?? '', item.metadata.name);
    ctx.log.info(`Claim ${item.metadata.namespace ?? ''}/${item.metadata.name} gets its data from the data mover (snapshot ${moved.snapshotHandle}); it waits for the volume labelled ${value}`);
    return { item: rewritePvcForDataDownload(item, value) };
  },
};
