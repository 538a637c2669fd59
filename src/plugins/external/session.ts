/**
 * The external plugins of a server and the sessions that run them. Discovery happens once, at server start; each
 * backup, restore or controller pass that needs plugins opens a session, which starts a binary's process the first
 * time one of its plugins is used and stops them all when closed. A session's processes log into that session's
 * loggers (a backup's log and the server's), each line with the plugin binary's name, as Velero's per-backup
 * plugin manager does.
 */
import { basename } from 'node:path';
import type { Logger } from '../../base/logger.js';
import { discoverPlugins } from './discovery.js';
import { qualifiedPluginName, type PluginIdentifier, type PluginKind } from './kinds.js';
import { forwardPluginLog } from './plugin-log.js';
import type { PluginServices } from './proto.js';
import { RestartableProcess } from './restartable.js';
import type { CallTarget } from './rpc.js';

export interface PluginRuntimeOptions {
  /** Arguments every plugin binary is started with (`--log-level=<level>`). */
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** How long a binary may take to start and shake hands. */
  startTimeoutMs?: number;
  /** The time limit of one call (and, for streams, between two messages). */
  callTimeoutMs: number;
}

export interface SessionOptions {
  /** Where the plugins' log lines go, e.g. a backup's log and the server's log. */
  logs: readonly Logger[];
}

export class ExternalPlugins {
  private readonly byKey = new Map<string, PluginIdentifier>();

  constructor(
    readonly plugins: readonly PluginIdentifier[],
    readonly runtime: PluginRuntimeOptions,
  ) {
    for (const p of plugins) this.byKey.set(`${p.kind}/${p.name}`, p);
  }

  /** Lists the plugins of every binary under `dir` (see discovery.ts). */
  static async discover(dir: string, runtime: PluginRuntimeOptions & { log: Logger }): Promise<ExternalPlugins> {
    const found = await discoverPlugins(dir, { ...runtime, log: runtime.log });
    const { log: _log, ...rest } = runtime;
    return new ExternalPlugins(found, rest);
  }

  static none(): ExternalPlugins {
    return new ExternalPlugins([], { callTimeoutMs: 60_000 });
  }

  /** The plugin of this kind and name (a name without a domain means Velero's: `aws` is `velero.io/aws`). */
  find(kind: PluginKind, name: string): PluginIdentifier | undefined {
    return this.byKey.get(`${kind}/${qualifiedPluginName(name)}`);
  }

  list(kind: PluginKind): PluginIdentifier[] {
    return this.plugins.filter((p) => p.kind === kind);
  }

  session(opts: SessionOptions): PluginSession {
    return new PluginSession(this.runtime, opts);
  }
}

export class PluginSession {
  private readonly processes = new Map<string, RestartableProcess>();
  private closed = false;

  constructor(
    private readonly runtime: PluginRuntimeOptions,
    private readonly opts: SessionOptions,
  ) {}

  get callTimeoutMs(): number {
    return this.runtime.callTimeoutMs;
  }

  /** The (restartable) process of a binary, started on first use. */
  process(command: string): RestartableProcess {
    if (this.closed) throw new Error('plugin session is closed');
    let p = this.processes.get(command);
    if (!p) {
      p = new RestartableProcess({
        command,
        ...(this.runtime.args ? { args: this.runtime.args } : {}),
        ...(this.runtime.env ? { env: this.runtime.env } : {}),
        ...(this.runtime.startTimeoutMs ? { startTimeoutMs: this.runtime.startTimeoutMs } : {}),
        onLog: (line) => forwardPluginLog(this.opts.logs, command, line),
        onRestart: ({ restarts }) => {
          for (const log of this.opts.logs) log.warn({ pluginName: basename(command), cmd: command, restarts }, 'plugin process had exited; started it again');
        },
      });
      this.processes.set(command, p);
    }
    return p;
  }

  /** Where a call on `id`'s service goes: its binary's live process (restarted if it had exited). */
  async target(id: PluginIdentifier, service: keyof PluginServices, timeoutMs = this.runtime.callTimeoutMs): Promise<CallTarget> {
    return { proc: await this.process(id.command).get(), service, plugin: id.name, timeoutMs };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.processes.values()].map((p) => p.stop()));
    this.processes.clear();
  }
}
