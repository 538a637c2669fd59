/**
 * Item actions: small plugins that see each item as it is backed up or restored and may change it, name related
 * items to include (a pod's PVCs, a PVC's PV), or skip it; Velero's kinds, shaped for cairn. The built-in actions
 * and external plugins (Velero plugin binaries, src/plugins/external) register through the same registry
 * (./registry.ts). An action may start an asynchronous operation (Velero's v2 actions): it returns an operation ID,
 * and the server asks `progress` until the operation is done, or `cancel`s it.
 */
import type { Backup, PodVolumeBackup, Restore } from '../../api/index.js';
import type { LabelSelectorLike } from '../../api/label-selectors.js';
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

/**
 * Which items an action wants to see. Group-resources as in the archive (`pods`, `deployments.apps`; `*` for all);
 * names as users write them (`pod`, `deploy`) are resolved through discovery where the caller can. Exclusions win.
 */
export interface ResourceSelector {
  includedResources: readonly string[];
  excludedResources?: readonly string[];
  /** Namespaces (default all). */
  includedNamespaces?: readonly string[];
  excludedNamespaces?: readonly string[];
  /** The item's labels must match this. */
  labelSelector?: LabelSelectorLike;
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
  /** Set when the action started an asynchronous operation (the backup waits for it). */
  operationID?: string;
  /** Items to back up again once the operation is done (Velero's postOperationItems). */
  postOperationItems?: RelatedItem[];
}

/** Where an asynchronous operation stands (Velero's OperationProgress). */
export interface OperationProgress {
  completed: boolean;
  /** Set when the operation failed. */
  error?: string;
  nCompleted: number;
  nTotal: number;
  operationUnits: string;
  description: string;
  started?: Date;
  updated?: Date;
}

/** What every item action has: its name and which items it wants to see. */
export interface ItemActionIdentity {
  readonly name: string;
  appliesTo(): ResourceSelector;
}

/**
 * An action that sees each item of a backup or a restore (`Owner`) and may start asynchronous operations on it, as
 * Velero's v2 item actions do.
 */
export interface OperationItemAction<Kind extends string, Ctx, Result, Owner> extends ItemActionIdentity {
  /** Velero's plugin kind this action is listed as (`velero plugin get`): `Kind` unless it says `<Kind>V2`. */
  readonly pluginKind?: Kind | `${Kind}V2`;
  execute(item: UnstructuredObject, ctx: Ctx): Promise<Result>;
  /** Where an operation this action started stands (actions that start operations). */
  progress?(operationID: string, owner: Owner): Promise<OperationProgress>;
  /** Stops an operation this action started. */
  cancel?(operationID: string, owner: Owner): Promise<void>;
}

export type BackupItemAction = OperationItemAction<'BackupItemAction', BackupItemContext, BackupItemResult, Backup>;

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
  /** Set when the action started an asynchronous operation. */
  operationID?: string;
  /** Wait until `areAdditionalItemsReady` says the additional items are ready before restoring this one. */
  waitForAdditionalItems?: boolean;
  /** How long to wait for them (0: the restore's resource timeout). */
  additionalItemsReadyTimeoutMs?: number;
}

export interface RestoreItemAction extends OperationItemAction<'RestoreItemAction', RestoreItemContext, RestoreItemResult, Restore> {
  /** Whether the additional items a restored item waits for (`waitForAdditionalItems`) are ready. */
  areAdditionalItemsReady?(items: readonly RelatedItem[], restore: Restore): Promise<boolean>;
}

export interface ItemContext {
  backup: Backup;
  log: Logger;
}

/** Runs for each item of a backup being deleted (Velero's DeleteItemAction): clean up what the item stood for. */
export interface DeleteItemAction extends ItemActionIdentity {
  execute(item: UnstructuredObject, ctx: ItemContext): Promise<void>;
}

/** Names the items that must be backed up together with an item (Velero's ItemBlockAction). */
export interface ItemBlockAction extends ItemActionIdentity {
  getRelatedItems(item: UnstructuredObject, ctx: ItemContext): Promise<RelatedItem[]>;
}
