/** A bound PersistentVolumeClaim needs its PersistentVolume (restore recreates or re-binds it). */
import type { BackupItemAction } from '../../plugins/item-actions/types.js';

export const pvcBackupAction: BackupItemAction = {
  name: 'velero.io/pv',
  appliesTo: () => ({ includedResources: ['persistentvolumeclaims'] }),
  execute: async (item) => {
    const volumeName = (item as { spec?: { volumeName?: string } }).spec?.volumeName;
    return { item, additionalItems: volumeName ? [{ groupResource: 'persistentvolumes', name: volumeName }] : [] };
  },
};
