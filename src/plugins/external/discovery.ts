/**
 * Finding plugins, as Velero's server does at start: every executable file under the plugin directory (recursively;
 * files without an execute bit are skipped with a warning) is started once and asked through its PluginLister
 * service which plugins it serves; then it is stopped again. Names are checked with Velero's rule, and two
 * binaries registering the same kind and name is an error that names both.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../base/logger.js';
import { isPluginKind, pluginNameProblem, type PluginIdentifier } from './kinds.js';
import type { ListPluginsResponse } from './messages.js';
import { PluginProcess } from './process.js';
import { unary } from './rpc.js';
import { forwardPluginLog } from './plugin-log.js';
import { PluginError } from './errors.js';

export class PluginDiscoveryError extends Error {}

/** Executable files under `dir`, sorted; none when it does not exist. */
export async function findPluginBinaries(dir: string, log?: Logger): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const found: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      found.push(...(await findPluginBinaries(path, log)));
      continue;
    }
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) continue;
    if ((info.mode & 0o111) === 0) {
      log?.warn({ file: path, mode: (info.mode & 0o777).toString(8) }, 'Skipping file in the plugin directory: it is not executable');
      continue;
    }
    found.push(path);
  }
  return found;
}

export interface ListPluginsOptions {
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
  log: Logger;
  startTimeoutMs?: number;
  callTimeoutMs: number;
}

/** Starts `command`, asks it for its plugins, stops it. */
export async function listPlugins(command: string, opts: ListPluginsOptions): Promise<PluginIdentifier[]> {
  const proc = await PluginProcess.start({
    command,
    ...(opts.args ? { args: opts.args } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.startTimeoutMs ? { startTimeoutMs: opts.startTimeoutMs } : {}),
    onLog: (line) => forwardPluginLog([opts.log], command, line),
  });
  try {
    const res = await unary<ListPluginsResponse>({ proc, service: 'PluginLister', plugin: proc.name, timeoutMs: opts.callTimeoutMs }, 'ListPlugins', {});
    return res.plugins.map((p) => {
      if (!isPluginKind(p.kind)) throw new PluginDiscoveryError(`plugin binary ${command} lists plugin ${p.name} of unknown kind ${p.kind}`);
      const problem = pluginNameProblem(p.name);
      if (problem) throw new PluginDiscoveryError(`plugin binary ${command}: invalid plugin name ${JSON.stringify(p.name)}: ${problem}`);
      return { command, kind: p.kind, name: p.name };
    });
  } finally {
    await proc.stop();
  }
}

/** Every plugin of every binary under `dir`; throws on a binary that is not a plugin or on duplicate names. */
export async function discoverPlugins(dir: string, opts: ListPluginsOptions): Promise<PluginIdentifier[]> {
  const binaries = await findPluginBinaries(dir, opts.log);
  // Listed side by side: each binary is its own process, and a server with several plugins starts faster.
  const listed = await Promise.all(
    binaries.map((command) =>
      listPlugins(command, opts).catch((err: unknown) => {
        throw err instanceof PluginError || err instanceof PluginDiscoveryError ? err : new PluginDiscoveryError(`plugin binary ${command}: ${(err as Error).message}`, { cause: err });
      }),
    ),
  );
  const byKey = new Map<string, PluginIdentifier>();
  const all: PluginIdentifier[] = [];
  for (const id of listed.flat()) {
    const key = `${id.kind}/${id.name}`;
    const existing = byKey.get(key);
    if (existing) {
      throw new PluginDiscoveryError(
        `unable to register plugin (kind=${id.kind}, name=${id.name}, command=${id.command}) because another plugin is already registered for this kind and name (command=${existing.command})`,
      );
    }
    byKey.set(key, id);
    all.push(id);
    opts.log.info({ kind: id.kind, name: id.name, command: id.command }, 'registering plugin');
  }
  return all;
}
