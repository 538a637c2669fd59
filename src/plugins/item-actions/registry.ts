/**
 * The registry of item actions: built-ins register at server start (src/server/item-actions/builtin.ts), external
 * plugins join per backup or restore (their processes belong to that run). The order of registration is the order
 * actions run in for an item; names are unique per kind, and a second action under a name is refused unless it is
 * registered with `replace` (a plugin asked to take a built-in's place).
 */
import { matchesLabelSelector } from '../../api/label-selectors.js';
import type { BackupItemAction, DeleteItemAction, ItemBlockAction, ResourceSelector, RestoreItemAction } from './types.js';

/** Turns a resource name as written in a selector (`pod`, `deploy`) into a group-resource; undefined if unknown. */
export type ResourceResolver = (name: string) => string | undefined;

/** The item an action might apply to. */
export interface ItemRef {
  groupResource: string;
  namespace?: string | undefined;
  labels?: Readonly<Record<string, string>> | undefined;
}

function matchesResource(list: readonly string[], groupResource: string, resolve: ResourceResolver | undefined): boolean {
  return list.some((r) => r === '*' || r === groupResource || resolve?.(r) === groupResource);
}

/** Whether an action with this selector sees the item (Velero's resolved ResourceSelector: exclusions win). */
export function appliesTo(selector: ResourceSelector, item: ItemRef, resolve?: ResourceResolver): boolean {
  if (!matchesResource(selector.includedResources, item.groupResource, resolve)) return false;
  if (selector.excludedResources && matchesResource(selector.excludedResources, item.groupResource, resolve)) return false;
  if (item.namespace) {
    const inc = selector.includedNamespaces;
    if (inc?.length && !inc.includes('*') && !inc.includes(item.namespace)) return false;
    if (selector.excludedNamespaces?.includes(item.namespace)) return false;
  }
  return !selector.labelSelector || matchesLabelSelector(item.labels, selector.labelSelector);
}

interface Named {
  readonly name: string;
}

function register<T extends Named>(list: T[], kind: string, action: T, replace: boolean): void {
  const at = list.findIndex((a) => a.name === action.name);
  if (at < 0) list.push(action);
  else if (replace) list[at] = action;
  else throw new Error(`${kind} ${action.name} registered twice`);
}

export interface RegisterOptions {
  /** Take the place of an action already registered under the same name (it keeps that action's position). */
  replace?: boolean;
}

export class ItemActionRegistry {
  private readonly backup: BackupItemAction[] = [];
  private readonly restore: RestoreItemAction[] = [];
  private readonly deletion: DeleteItemAction[] = [];
  private readonly itemBlock: ItemBlockAction[] = [];

  registerBackupAction(action: BackupItemAction, opts: RegisterOptions = {}): this {
    register(this.backup, 'backup item action', action, opts.replace ?? false);
    return this;
  }

  registerRestoreAction(action: RestoreItemAction, opts: RegisterOptions = {}): this {
    register(this.restore, 'restore item action', action, opts.replace ?? false);
    return this;
  }

  registerDeleteAction(action: DeleteItemAction, opts: RegisterOptions = {}): this {
    register(this.deletion, 'delete item action', action, opts.replace ?? false);
    return this;
  }

  registerItemBlockAction(action: ItemBlockAction, opts: RegisterOptions = {}): this {
    register(this.itemBlock, 'item block action', action, opts.replace ?? false);
    return this;
  }

  /** A registry with the same actions, to which a run adds its own (external plugins) without touching this one. */
  copy(): ItemActionRegistry {
    const out = new ItemActionRegistry();
    out.backup.push(...this.backup);
    out.restore.push(...this.restore);
    out.deletion.push(...this.deletion);
    out.itemBlock.push(...this.itemBlock);
    return out;
  }

  has(kind: 'backup' | 'restore' | 'delete' | 'itemBlock', name: string): boolean {
    const list: readonly Named[] = { backup: this.backup, restore: this.restore, delete: this.deletion, itemBlock: this.itemBlock }[kind];
    return list.some((a) => a.name === name);
  }

  backupAction(name: string): BackupItemAction | undefined {
    return this.backup.find((a) => a.name === name);
  }

  restoreAction(name: string): RestoreItemAction | undefined {
    return this.restore.find((a) => a.name === name);
  }

  backupActionsFor(groupResource: string, namespace?: string, labels?: Readonly<Record<string, string>>, resolve?: ResourceResolver): BackupItemAction[] {
    return this.backup.filter((a) => appliesTo(a.appliesTo(), { groupResource, namespace, labels }, resolve));
  }

  restoreActionsFor(groupResource: string, namespace?: string, labels?: Readonly<Record<string, string>>, resolve?: ResourceResolver): RestoreItemAction[] {
    return this.restore.filter((a) => appliesTo(a.appliesTo(), { groupResource, namespace, labels }, resolve));
  }

  deleteActionsFor(item: ItemRef, resolve?: ResourceResolver): DeleteItemAction[] {
    return this.deletion.filter((a) => appliesTo(a.appliesTo(), item, resolve));
  }

  itemBlockActionsFor(item: ItemRef, resolve?: ResourceResolver): ItemBlockAction[] {
    return this.itemBlock.filter((a) => appliesTo(a.appliesTo(), item, resolve));
  }

  /** Whether some delete action may apply to items of this group-resource and namespace, whatever their labels. */
  deleteActionsMayApply(item: Omit<ItemRef, 'labels'>, resolve?: ResourceResolver): boolean {
    return this.deletion.some((a) => appliesTo({ ...a.appliesTo(), labelSelector: undefined }, item, resolve));
  }

  get deleteActionCount(): number {
    return this.deletion.length;
  }

  /** Every registered action with the Velero plugin kind it is listed as. */
  get listed(): { name: string; kind: string }[] {
    return [
      ...this.backup.map((a) => ({ name: a.name, kind: a.pluginKind ?? 'BackupItemAction' })),
      ...this.restore.map((a) => ({ name: a.name, kind: a.pluginKind ?? 'RestoreItemAction' })),
      ...this.deletion.map((a) => ({ name: a.name, kind: 'DeleteItemAction' })),
      ...this.itemBlock.map((a) => ({ name: a.name, kind: 'ItemBlockAction' })),
    ];
  }

  get names(): { backup: string[]; restore: string[] } {
    return { backup: this.backup.map((a) => a.name), restore: this.restore.map((a) => a.name) };
  }
}
