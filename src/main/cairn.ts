/**
 * The program: every command of cairn by its oclif ID (oclif's explicit command discovery, named in package.json),
 * and oclif's `execute` that bin/run.js calls.
 *
 * `npm run build` bundles this module with everything it imports into one program under dist/main/
 * (scripts/bundle.mjs): a command then starts by reading a few files instead of ~1,400 modules from node_modules,
 * which is most of a short command's time. Exporting `execute` from here makes bin/run.js use the bundle's copy of
 * oclif, the one these command classes extend.
 *
 * Each command is imported on demand (a chunk of its own in the bundle): when the arguments name a command, COMMANDS
 * holds that one only, so `version` does not load and evaluate the Kubernetes and S3 clients. Arguments that name no
 * command (help, `oclif manifest`, a mistyped command) load them all, and oclif answers as it always does.
 *
 * A new command is added here as well as under src/commands/ (a unit test compares the two).
 */
import type { Command } from '@oclif/core';

export { execute } from '@oclif/core';

/** Every command by its oclif ID, as a loader of its module. */
export const COMMAND_LOADERS: Record<string, () => Promise<{ default: Command.Class }>> = {
  'backup-location:create': () => import('../commands/backup-location/create.js'),
  'backup-location:get': () => import('../commands/backup-location/get.js'),
  'backup-location:set': () => import('../commands/backup-location/set.js'),
  'backup:cancel': () => import('../commands/backup/cancel.js'),
  'backup:create': () => import('../commands/backup/create.js'),
  'backup:delete': () => import('../commands/backup/delete.js'),
  'backup:describe': () => import('../commands/backup/describe.js'),
  'backup:download': () => import('../commands/backup/download.js'),
  'backup:get': () => import('../commands/backup/get.js'),
  'backup:logs': () => import('../commands/backup/logs.js'),
  'client:config:get': () => import('../commands/client/config/get.js'),
  'client:config:set': () => import('../commands/client/config/set.js'),
  'data-mover:backup': () => import('../commands/data-mover/backup.js'),
  'data-mover:restore': () => import('../commands/data-mover/restore.js'),
  'debug': () => import('../commands/debug.js'),
  'install': () => import('../commands/install.js'),
  'node-agent:server': () => import('../commands/node-agent/server.js'),
  'plugin:add': () => import('../commands/plugin/add.js'),
  'plugin:get': () => import('../commands/plugin/get.js'),
  'plugin:remove': () => import('../commands/plugin/remove.js'),
  'pod-volume:backup': () => import('../commands/pod-volume/backup.js'),
  'pod-volume:restore': () => import('../commands/pod-volume/restore.js'),
  'repo:backup': () => import('../commands/repo/backup.js'),
  'repo:check': () => import('../commands/repo/check.js'),
  'repo:get': () => import('../commands/repo/get.js'),
  'repo:init': () => import('../commands/repo/init.js'),
  'repo:key': () => import('../commands/repo/key.js'),
  'repo:maintenance': () => import('../commands/repo/maintenance.js'),
  'repo:restore': () => import('../commands/repo/restore.js'),
  'repo:snapshots': () => import('../commands/repo/snapshots.js'),
  'restore-helper': () => import('../commands/restore-helper.js'),
  'restore:cancel': () => import('../commands/restore/cancel.js'),
  'restore:create': () => import('../commands/restore/create.js'),
  'restore:delete': () => import('../commands/restore/delete.js'),
  'restore:describe': () => import('../commands/restore/describe.js'),
  'restore:get': () => import('../commands/restore/get.js'),
  'restore:logs': () => import('../commands/restore/logs.js'),
  'schedule:create': () => import('../commands/schedule/create.js'),
  'schedule:delete': () => import('../commands/schedule/delete.js'),
  'schedule:describe': () => import('../commands/schedule/describe.js'),
  'schedule:get': () => import('../commands/schedule/get.js'),
  'schedule:pause': () => import('../commands/schedule/pause.js'),
  'schedule:unpause': () => import('../commands/schedule/unpause.js'),
  'server': () => import('../commands/server.js'),
  'uninstall': () => import('../commands/uninstall.js'),
  'version': () => import('../commands/version.js'),
};

/**
 * The command oclif will run for these arguments: the longest run of leading words (topics separated by spaces, or
 * an ID written with colons) that is a command's ID; none when the arguments start with a flag or name no command.
 */
export function commandIdOf(argv: readonly string[], ids: readonly string[]): string | undefined {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  for (let n = words.length; n > 0; n--) {
    const id = words.slice(0, n).join(':');
    if (ids.includes(id)) return id;
  }
  return undefined;
}

/** The command classes this run may need: the one the arguments name, else every one. */
export async function loadCommands(argv: readonly string[]): Promise<Record<string, Command.Class>> {
  const id = commandIdOf(argv, Object.keys(COMMAND_LOADERS));
  const ids = id ? [id] : Object.keys(COMMAND_LOADERS);
  const classes = await Promise.all(ids.map(async (one) => (await COMMAND_LOADERS[one]!()).default));
  return Object.fromEntries(ids.map((one, i) => [one, classes[i]!]));
}

export const COMMANDS = await loadCommands(process.argv.slice(2));
