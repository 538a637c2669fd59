/**
 * What a ServerStatusRequest reports as the server's plugins (`velero plugin get`): every built-in item action
 * under its name and Velero's plugin kind, and the object stores behind the providers cairn serves. Velero's kinds
 * (pkg/plugin/framework/common): ObjectStore, VolumeSnapshotter, BackupItemAction(V2), RestoreItemAction(V2),
 * DeleteItemAction, ItemBlockAction. A BackupStorageLocation's provider `aws` names the plugin `velero.io/aws`, as
 * Velero resolves a provider without a slash; cairn has no volume snapshotter, so it lists none.
 */
import { registerBuiltinActions } from './item-actions/builtin.js';
import { ItemActionRegistry } from '../plugins/item-actions/registry.js';

export interface InstalledPlugin {
  name: string;
  kind: string;
}

/** The object stores built in: S3 and S3-compatible stores (provider `aws`) and a directory (provider `filesystem`). */
export const BUILTIN_OBJECT_STORES: readonly InstalledPlugin[] = [
  { name: 'velero.io/aws', kind: 'ObjectStore' },
  { name: 'velero.io/filesystem', kind: 'ObjectStore' },
];

/** The plugins of a server running these actions (the built-ins by default), sorted by kind then name. */
export function installedPlugins(registry: ItemActionRegistry = registerBuiltinActions(new ItemActionRegistry())): InstalledPlugin[] {
  return [...BUILTIN_OBJECT_STORES, ...registry.listed].sort((a, b) => (a.kind === b.kind ? compare(a.name, b.name) : compare(a.kind, b.kind)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
