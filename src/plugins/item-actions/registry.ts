/**
 * The registry of item actions. Built-ins register at server start (./builtin.ts); the order of registration is
 * the order actions run in for an item.
 */
import type { BackupItemAction, ResourceSelector, RestoreItemAction } from './types.js';

function applies(selector: ResourceSelector, groupResource: string, namespace: string | undefined): boolean {
  const resOk = selector.includedResources.includes('*') || selector.includedResources.includes(groupResource);
  const nsOk = !selector.includedNamespaces || !namespace || selector.includedNamespaces.includes('*') || selector.includedNamespaces.includes(namespace);
  return resOk && nsOk;
}

export class ItemActionRegistry {
  private readonly backup: BackupItemAction[] = [];
  private readonly restore: RestoreItemAction[] = [];

  registerBackupAction(action: BackupItemAction): this {
    if (this.backup.some((a) => a.name === action.name)) throw new Error(`backup item action ${action.name} registered twice`);
    this.backup.push(action);
    return this;
  }

  registerRestoreAction(action: RestoreItemAction): this {
    if (this.restore.some((a) => a.name === action.name)) throw new Error(`restore item action ${action.name} registered twice`);
    this.restore.push(action);
    return this;
  }

  backupActionsFor(groupResource: string, namespace?: string): BackupItemAction[] {
    return this.backup.filter((a) => applies(a.appliesTo(), groupResource, namespace));
  }

  restoreActionsFor(groupResource: string, namespace?: string): RestoreItemAction[] {
    return this.restore.filter((a) => applies(a.appliesTo(), groupResource, namespace));
  }

  /** Every registered action with the Velero plugin kind it is listed as. */
  get listed(): { name: string; kind: string }[] {
    return [
      ...this.backup.map((a) => ({ name: a.name, kind: a.pluginKind ?? 'BackupItemAction' })),
      ...this.restore.map((a) => ({ name: a.name, kind: a.pluginKind ?? 'RestoreItemAction' })),
    ];
  }

  get names(): { backup: string[]; restore: string[] } {
    return { backup: this.backup.map((a) => a.name), restore: this.restore.map((a) => a.name) };
  }
}
