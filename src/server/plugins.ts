/**
 * The server's external plugins: found once at start in the plugin directory (`--plugin-dir`, default /plugins,
 * where install's init containers copy plugin binaries), then joined to the built-ins for each backup or restore.
 * Built-ins are the default: a plugin registered under a built-in's name (Velero's AWS plugin is `velero.io/aws`,
 * like cairn's S3 store) is used instead only when the server was asked to (`--prefer-plugin NAME`); otherwise
 * the server says at start that it is not used.
 */
import type { Logger } from '../base/logger.js';
import {
  ExternalPlugins,
  externalBackupItemAction,
  externalDeleteItemAction,
  externalItemBlockAction,
  externalRestoreItemAction,
  qualifiedPluginName,
  type PluginIdentifier,
  type PluginSession,
} from '../plugins/external/index.js';
import type { ItemActionRegistry } from '../plugins/item-actions/registry.js';
import type { BackupItemAction } from '../plugins/item-actions/types.js';
import { BUILTIN_OBJECT_STORE_NAMES, type LocationPlugins } from '../storage/location-store.js';

export interface ServerPluginsOptions {
  dir: string;
  /** Plugin names that take the place of the built-in of the same name. */
  prefer: readonly string[];
  callTimeoutMs: number;
  startTimeoutMs?: number;
  /** Passed to each plugin as `--log-level` (Velero passes its server flags). */
  logLevel: string;
  log: Logger;
}

/** Velero's framework accepts logrus level names. */
function pluginLogLevel(level: string): string {
  return level === 'warn' ? 'warning' : level;
}

export class ServerPlugins {
  /** The server's own session (storage locations' object stores outside a backup run): logs to the server log. */
  private readonly shared: PluginSession;

  constructor(
    readonly external: ExternalPlugins,
    readonly preferred: ReadonlySet<string>,
    log: Logger,
  ) {
    this.shared = external.session({ logs: [log] });
  }

  static none(log: Logger): ServerPlugins {
    return new ServerPlugins(ExternalPlugins.none(), new Set(), log);
  }

  /** For LocationResolver and openLocationStore: object-store plugins in the server's session. */
  get locations(): LocationPlugins {
    return { external: this.external, session: this.shared, preferred: this.preferred };
  }

  /** Stops every plugin process of the server's session (runs close their own). */
  async stop(): Promise<void> {
    await this.shared.close();
  }

  static async start(opts: ServerPluginsOptions): Promise<ServerPlugins> {
    const external = await ExternalPlugins.discover(opts.dir, {
      args: [`--log-level=${pluginLogLevel(opts.logLevel)}`],
      callTimeoutMs: opts.callTimeoutMs,
      ...(opts.startTimeoutMs ? { startTimeoutMs: opts.startTimeoutMs } : {}),
      log: opts.log,
    });
    const preferred = new Set(opts.prefer.map(qualifiedPluginName));
    for (const name of preferred) {
      if (!external.plugins.some((p) => p.name === name)) opts.log.warn({ plugin: name }, 'asked to prefer a plugin that no plugin binary registers; the built-in stays in use');
    }
    for (const p of external.plugins) {
      if (BUILTIN_OBJECT_STORE_NAMES.includes(p.name) && p.kind === 'ObjectStore' && !preferred.has(p.name)) {
        opts.log.warn({ plugin: p.name, kind: p.kind, command: p.command }, `the built-in ${p.name} is used instead of this plugin (ask for the plugin with --prefer-plugin ${p.name})`);
      }
    }
    return new ServerPlugins(external, preferred, opts.log);
  }

  /** A session whose plugin processes log into `logs`; close it when the run ends. */
  session(logs: readonly Logger[]): PluginSession {
    return this.external.session({ logs });
  }

  /** Whether the plugin takes the place of a built-in with its name (or there is no such built-in). */
  wins(name: string, builtIn: boolean): boolean {
    return !builtIn || this.preferred.has(name);
  }

  /** Plugins not used because a built-in of the same name is (for the start-up log and `plugin get`). */
  shadowed(builtins: ItemActionRegistry): PluginIdentifier[] {
    return this.external.plugins.filter((p) => this.isBuiltIn(p, builtins) && !this.preferred.has(p.name));
  }

  private isBuiltIn(p: PluginIdentifier, builtins: ItemActionRegistry): boolean {
    switch (p.kind) {
      case 'BackupItemAction':
      case 'BackupItemActionV2':
        return builtins.has('backup', p.name);
      case 'RestoreItemAction':
      case 'RestoreItemActionV2':
        return builtins.has('restore', p.name);
      case 'DeleteItemAction':
        return builtins.has('delete', p.name);
      case 'ItemBlockAction':
        return builtins.has('itemBlock', p.name);
      case 'ObjectStore':
        return BUILTIN_OBJECT_STORE_NAMES.includes(p.name);
      case 'VolumeSnapshotter':
        return false;
    }
  }

  /**
   * The actions of one run: the built-ins, then the external actions of the kinds asked for, in discovery order
   * (as Velero orders them), each asked once what it applies to. A preferred plugin takes its built-in's place.
   */
  async actionsFor(session: PluginSession, builtins: ItemActionRegistry, kinds: ReadonlySet<'backup' | 'restore' | 'delete' | 'itemBlock'>): Promise<ItemActionRegistry> {
    const registry = builtins.copy();
    for (const p of this.external.plugins) {
      const builtIn = this.isBuiltIn(p, builtins);
      if (!this.wins(p.name, builtIn)) continue;
      const opts = { replace: builtIn };
      if ((p.kind === 'BackupItemAction' || p.kind === 'BackupItemActionV2') && kinds.has('backup')) {
        registry.registerBackupAction(await externalBackupItemAction(session, p), opts);
      } else if ((p.kind === 'RestoreItemAction' || p.kind === 'RestoreItemActionV2') && kinds.has('restore')) {
        registry.registerRestoreAction(await externalRestoreItemAction(session, p), opts);
      } else if (p.kind === 'DeleteItemAction' && kinds.has('delete')) {
        registry.registerDeleteAction(await externalDeleteItemAction(session, p), opts);
      } else if (p.kind === 'ItemBlockAction' && kinds.has('itemBlock')) {
        registry.registerItemBlockAction(await externalItemBlockAction(session, p), opts);
      }
    }
    return registry;
  }

  /** The backup item action of this name in effect: the preferred or only plugin, else the built-in. */
  async backupAction(session: PluginSession, name: string, builtins: ItemActionRegistry): Promise<BackupItemAction | undefined> {
    const builtIn = builtins.backupAction(name);
    const id = this.external.find('BackupItemActionV2', name) ?? this.external.find('BackupItemAction', name);
    if (id && this.wins(id.name, builtIn !== undefined)) return externalBackupItemAction(session, id);
    return builtIn;
  }

  /** Every plugin in effect with its Velero kind: built-ins (`builtins` listed) and the external ones that are used. */
  listed(builtins: readonly { name: string; kind: string }[], builtinRegistry: ItemActionRegistry): { name: string; kind: string }[] {
    const shadowed = new Set(this.shadowed(builtinRegistry).map((p) => `${p.kind}/${p.name}`));
    const seen = new Set<string>();
    const out: { name: string; kind: string }[] = [];
    for (const p of [...builtins, ...this.external.plugins.filter((x) => !shadowed.has(`${x.kind}/${x.name}`))]) {
      const key = `${p.kind}/${p.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ name: p.name, kind: p.kind });
    }
    return out;
  }
}

/**
 * What `plugin get` lists for a server (a ServerStatusRequest's status.plugins): the built-in object stores and item
 * actions under Velero's kinds (ObjectStore, VolumeSnapshotter, BackupItemAction(V2), RestoreItemAction(V2),
 * DeleteItemAction, ItemBlockAction), then the external plugins in use (one a built-in shadows is left out: it does
 * not run). A location's provider `aws` names the plugin `velero.io/aws`, as Velero resolves a provider without a
 * slash; cairn has no volume snapshotter of its own. `velero plugin get` sorts the list itself.
 */
export function serverPluginList(plugins: ServerPlugins | undefined, builtinActions: ItemActionRegistry): { name: string; kind: string }[] {
  const builtins = [...BUILTIN_OBJECT_STORE_NAMES.map((name) => ({ name, kind: 'ObjectStore' })), ...builtinActions.listed];
  return plugins ? plugins.listed(builtins, builtinActions) : builtins;
}
