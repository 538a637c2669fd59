/**
 * Velero's item action plugins as cairn's item actions: BackupItemAction v1/v2, RestoreItemAction v1/v2,
 * DeleteItemAction and ItemBlockAction. Items and the Backup/Restore travel as JSON, as Velero's client sends
 * them; the resource selector is asked once, when the action joins a run (Velero resolves actions per backup).
 */
import type { Backup, Restore } from '../../api/index.js';
import { parseLabelSelectorText } from '../../api/label-selectors.js';
import type {
  BackupItemAction,
  BackupItemResult,
  DeleteItemAction,
  ItemActionIdentity,
  ItemBlockAction,
  OperationProgress,
  RelatedItem,
  ResourceSelector,
  RestoreItemAction,
  RestoreItemResult,
  UnstructuredObject,
} from '../item-actions/types.js';
import { PluginError } from './errors.js';
import type { PluginIdentifier } from './kinds.js';
import {
  durationToMs,
  timestampToDate,
  type AppliesToResponse,
  type BackupExecuteResponseV2,
  type Empty,
  type ItemsReadyResponse,
  type OperationProgressMessage,
  type ProgressResponse,
  type RelatedItemsResponse,
  type ResourceIdentifierMessage,
  type RestoreExecuteResponseV2,
} from './messages.js';
import type { PluginServices } from './proto.js';
import { unary } from './rpc.js';
import type { PluginSession } from './session.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** Velero's ResourceSelector as cairn's; an empty include list means every resource, as in Velero. */
export function selectorFromMessage(res: AppliesToResponse, plugin: string): ResourceSelector {
  const m = res.ResourceSelector;
  if (!m) return { includedResources: ['*'] };
  let labelSelector;
  try {
    labelSelector = m.selector ? parseLabelSelectorText(m.selector) : undefined;
  } catch (err) {
    throw new PluginError(`plugin ${plugin} applies to items matching a label selector that cannot be parsed: ${(err as Error).message}`, plugin);
  }
  return {
    includedResources: m.includedResources.length ? m.includedResources : ['*'],
    ...(m.excludedResources.length ? { excludedResources: m.excludedResources } : {}),
    ...(m.includedNamespaces.length ? { includedNamespaces: m.includedNamespaces } : {}),
    ...(m.excludedNamespaces.length ? { excludedNamespaces: m.excludedNamespaces } : {}),
    ...(labelSelector ? { labelSelector } : {}),
  };
}

/** Velero's ResourceIdentifier (group, resource, namespace, name) as a related item (`deployments.apps`). */
export function relatedFromMessage(r: ResourceIdentifierMessage): RelatedItem {
  return { groupResource: r.group ? `${r.resource}.${r.group}` : r.resource, ...(r.namespace ? { namespace: r.namespace } : {}), name: r.name };
}

export function relatedToMessage(r: RelatedItem): ResourceIdentifierMessage {
  const dot = r.groupResource.indexOf('.');
  return {
    group: dot < 0 ? '' : r.groupResource.slice(dot + 1),
    resource: dot < 0 ? r.groupResource : r.groupResource.slice(0, dot),
    namespace: r.namespace ?? '',
    name: r.name,
  };
}

export function progressFromMessage(p: OperationProgressMessage | null): OperationProgress {
  const started = timestampToDate(p?.started);
  const updated = timestampToDate(p?.updated);
  return {
    completed: p?.completed ?? false,
    ...(p?.err ? { error: p.err } : {}),
    nCompleted: Number(p?.nCompleted ?? 0),
    nTotal: Number(p?.nTotal ?? 0),
    operationUnits: p?.operationUnits ?? '',
    description: p?.description ?? '',
    ...(started ? { started } : {}),
    ...(updated ? { updated } : {}),
  };
}

/** The item the plugin returned; the one it was given when it returned none. */
function itemFrom(raw: Buffer, fallback: UnstructuredObject, plugin: string): UnstructuredObject {
  if (!raw.length) return fallback;
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as UnstructuredObject | null;
    return parsed && typeof parsed === 'object' ? parsed : fallback;
  } catch (err) {
    throw new PluginError(`plugin ${plugin} returned an item that is not JSON: ${(err as Error).message}`, plugin);
  }
}

type Call = <Res>(method: string, req: object) => Promise<Res>;

/** Calls on one plugin's service, each with the plugin's name in the request as Velero's client sends it. */
function callerOf(session: PluginSession, id: PluginIdentifier, service: keyof PluginServices): Call {
  return async <Res>(method: string, req: object) => unary<Res>(await session.target(id, service), method, { plugin: id.name, ...req });
}

/** The calls on one action plugin's service and what every action says about itself: its name and selector. */
async function joinAction(
  session: PluginSession,
  id: PluginIdentifier,
  service: keyof PluginServices,
): Promise<{ call: Call; identity: ItemActionIdentity }> {
  const call = callerOf(session, id, service);
  const selector = selectorFromMessage(await call<AppliesToResponse>('AppliesTo', {}), id.name);
  return { call, identity: { name: id.name, appliesTo: () => selector } };
}

/**
 * joinAction for a kind served as v1 or v2 (`<kind>V2`, with asynchronous operations): the plugin's kind says which
 * service to call, and the action lists itself under that kind.
 */
async function joinVersionedAction<K extends 'BackupItemAction' | 'RestoreItemAction'>(session: PluginSession, id: PluginIdentifier, v1: K) {
  const v2 = id.kind === `${v1}V2`;
  const pluginKind = v2 ? (`${v1}V2` as const) : v1;
  const { call, identity } = await joinAction(session, id, pluginKind);
  return { v2, call, identity: { ...identity, pluginKind } };
}

/**
 * Progress and Cancel of a v2 action's asynchronous operations. The two services differ only in the request field
 * that carries the backup or the restore (`owner`).
 */
function operationCalls<T>(
  call: Call,
  owner: 'backup' | 'restore',
): { progress(operationID: string, obj: T): Promise<OperationProgress>; cancel(operationID: string, obj: T): Promise<void> } {
  return {
    progress: async (operationID, obj) => progressFromMessage((await call<ProgressResponse>('Progress', { operationID, [owner]: json(obj) })).progress),
    cancel: async (operationID, obj) => void (await call<Empty>('Cancel', { operationID, [owner]: json(obj) })),
  };
}

/** A BackupItemAction plugin (v1, or v2 with asynchronous operations). */
export async function externalBackupItemAction(session: PluginSession, id: PluginIdentifier): Promise<BackupItemAction> {
  const { v2, call, identity } = await joinVersionedAction(session, id, 'BackupItemAction');
  const action: BackupItemAction = {
    ...identity,
    async execute(item, ctx): Promise<BackupItemResult> {
      const res = await call<BackupExecuteResponseV2>('Execute', { item: json(item), backup: json(ctx.backup) });
      return {
        item: itemFrom(res.item, item, id.name),
        additionalItems: res.additionalItems.map(relatedFromMessage),
        ...(v2 && res.operationID ? { operationID: res.operationID } : {}),
        ...(v2 && res.postOperationItems?.length ? { postOperationItems: res.postOperationItems.map(relatedFromMessage) } : {}),
      };
    },
  };
  return v2 ? Object.assign(action, operationCalls<Backup>(call, 'backup')) : action;
}

/** A RestoreItemAction plugin (v1, or v2 with operations and waiting for additional items). */
export async function externalRestoreItemAction(session: PluginSession, id: PluginIdentifier): Promise<RestoreItemAction> {
  const { v2, call, identity } = await joinVersionedAction(session, id, 'RestoreItemAction');
  const action: RestoreItemAction = {
    ...identity,
    async execute(item, ctx): Promise<RestoreItemResult> {
      const res = await call<RestoreExecuteResponseV2>('Execute', { item: json(item), itemFromBackup: json(ctx.itemFromBackup), restore: json(ctx.restore) });
      const timeoutMs = durationToMs(res.additionalItemsReadyTimeout);
      return {
        item: itemFrom(res.item, item, id.name),
        ...(res.additionalItems.length ? { additionalItems: res.additionalItems.map(relatedFromMessage) } : {}),
        ...(res.skipRestore ? { skip: { reason: `restore item action ${id.name} said to skip it` } } : {}),
        ...(v2 && res.operationID ? { operationID: res.operationID } : {}),
        ...(v2 && res.waitForAdditionalItems ? { waitForAdditionalItems: true } : {}),
        ...(v2 && timeoutMs ? { additionalItemsReadyTimeoutMs: timeoutMs } : {}),
      };
    },
  };
  if (v2) {
    Object.assign(action, operationCalls<Restore>(call, 'restore'));
    action.areAdditionalItemsReady = async (items, restore) =>
      (await call<ItemsReadyResponse>('AreAdditionalItemsReady', { additionalItems: items.map(relatedToMessage), restore: json(restore) })).ready;
  }
  return action;
}

export async function externalDeleteItemAction(session: PluginSession, id: PluginIdentifier): Promise<DeleteItemAction> {
  const { call, identity } = await joinAction(session, id, 'DeleteItemAction');
  return {
    ...identity,
    async execute(item, ctx) {
      await call<Empty>('Execute', { item: json(item), backup: json(ctx.backup) });
    },
  };
}

export async function externalItemBlockAction(session: PluginSession, id: PluginIdentifier): Promise<ItemBlockAction> {
  const { call, identity } = await joinAction(session, id, 'ItemBlockAction');
  return {
    ...identity,
    async getRelatedItems(item, ctx) {
      return (await call<RelatedItemsResponse>('GetRelatedItems', { item: json(item), backup: json(ctx.backup) })).relatedItems.map(relatedFromMessage);
    },
  };
}
