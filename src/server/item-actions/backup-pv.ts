/** A PersistentVolume claimed by a PVC brings the claim along, so a restored PV is not left unbound. */
import type { BackupItemAction } from '../../plugins/item-actions/types.js';

export const pvBackupAction: BackupItemAction = {
  name: 'cairn.io/pv-claim',
  appliesTo: () => ({ includedResources: ['persistentvolumes'] }),
  execute: async (item) => {
    const claim = (item as { spec?: { claimRef?: { name?: string; namespace?: string } } }).spec?.claimRef;
    return {
      item,
      additionalItems: claim?.name && claim.namespace ? [{ groupResource: 'persistentvolumeclaims', namespace: claim.namespace, name: claim.name }] : [],
    };
  },
};
