/**
 * Item actions: small plugins that see each item as it is backed up or restored and may change it, name related
 * items to include (a pod's PVCs, a PVC's PV), or skip it. The built-in actions register through the same
 * registry (./registry.ts) an external plugin would use.
 */
import type { Backup, PodVolumeBackup, Restore } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import type { StoredBackupVolumeInfo } from '../../api/volume-info.js';

/** A Kubernetes object as read from the API or an archive: only apiVersion/kind/metadata are known. */
export interface UnstructuredObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** Which items an action wants to see. Group-resources as in the archive: `pods`, `deployments.apps`. */
export interface ResourceSelector {
  includedResources: readonly string[];
  /** Namespaces (default all). */
  includedNamespaces?: readonly string[];
}

/** Another item to back up (or restore first) because this one needs it. */
export interface RelatedItem {
  groupResource: string;
  namespace?: string;
  name: string;
}

export interface BackupItemContext {
  backup: Backup;
  kube: Kube;
  log: Logger;
}

export interface BackupItemResult {
  item: UnstructuredObject;
  additionalItems: RelatedItem[];
}

export interface BackupItemAction {
  readonly name: string;
  /** Velero's plugin kind this action is listed as (`velero plugin get`); BackupItemAction unless it says V2. */
  readonly pluginKind?: 'BackupItemAction' | 'BackupItemActionV2';
  appliesTo(): ResourceSelector;
  execute(item: UnstructuredObject, ctx: BackupItemContext): Promise<BackupItemResult>;
}

export interface RestoreItemContext {
  restore: Restore;
  backup: Backup;
  kube: Kube;
  log: Logger;
  /** The item exactly as it is in the backup (before earlier actions changed it). */
  itemFromBackup: UnstructuredObject;
  /** The backup's PodVolumeBackups (fs-backup), when the restore has them; pods use them to wait for their data. */
  podVolumeBackups?: readonly PodVolumeBackup[];
  /** The backup's volume info (`<backup>-volumeinfo.json.gz`): how each volume's data was backed up. */
  volumeInfos?: readonly StoredBackupVolumeInfo[];
  /**
   * An action's configuration, as Velero's plugins read it: the data of the one ConfigMap in the install namespace
   * labelled `velero.io/plugin-config` and `<action name>: RestoreItemAction` (undefined when there is none; more
   * than one is an error).
   */
  pluginConfig?: (action: string) => Promise<Record<string, string> | undefined>;
  /** Reports a warning in the restore's results (something asked for that is not acted on). */
  warn?: (message: string) => void;
}

export interface RestoreItemResult {
  item: UnstructuredObject;
  /** Items to restore before this one. */
  additionalItems?: RelatedItem[];
  /** Do not create this item (with the reason, logged). */
  skip?: { reason: string };
}

export interface RestoreItemAction {
  readonly name: string;
  /** Velero's plugin kind this action is listed as (`velero plugin get`); RestoreItemAction unless it says V2. */
  readonly pluginKind?: 'RestoreItemAction' | 'RestoreItemActionV2';
  appliesTo(): ResourceSelector;
  execute(item: UnstructuredObject, ctx: RestoreItemContext): Promise<RestoreItemResult>;
}
