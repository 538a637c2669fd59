/**
 * The program: every command of cairn by its oclif ID (oclif's explicit command discovery, named in package.json),
 * and oclif's `execute` that bin/run.js calls.
 *
 * `npm run build` bundles this module with everything it imports into one program under dist/main/
 * (scripts/bundle.mjs): a command then starts by reading a few files instead of ~1,400 modules from node_modules,
 * which is most of a short command's time (`backup get`: ~0.35 s instead of ~0.8 s of CPU, ~0.2 s with a warm compile cache). Exporting `execute` from
 * here makes bin/run.js use the bundle's copy of oclif, the one these command classes extend.
 *
 * A new command is added here as well as under src/commands/ (a unit test compares the two).
 */
import BackupLocationCreate from '../commands/backup-location/create.js';
import BackupLocationGet from '../commands/backup-location/get.js';
import BackupLocationSet from '../commands/backup-location/set.js';
import BackupCancel from '../commands/backup/cancel.js';
import BackupCreate from '../commands/backup/create.js';
import BackupDelete from '../commands/backup/delete.js';
import BackupDescribe from '../commands/backup/describe.js';
import BackupDownload from '../commands/backup/download.js';
import BackupGet from '../commands/backup/get.js';
import BackupLogs from '../commands/backup/logs.js';
import ClientConfigGet from '../commands/client/config/get.js';
import ClientConfigSet from '../commands/client/config/set.js';
import DataMoverBackup from '../commands/data-mover/backup.js';
import DataMoverRestore from '../commands/data-mover/restore.js';
import Debug from '../commands/debug.js';
import Install from '../commands/install.js';
import NodeAgentServer from '../commands/node-agent/server.js';
import PluginAdd from '../commands/plugin/add.js';
import PluginGet from '../commands/plugin/get.js';
import PluginRemove from '../commands/plugin/remove.js';
import PodVolumeBackup from '../commands/pod-volume/backup.js';
import PodVolumeRestore from '../commands/pod-volume/restore.js';
import RepoBackup from '../commands/repo/backup.js';
import RepoCheck from '../commands/repo/check.js';
import RepoGet from '../commands/repo/get.js';
import RepoInit from '../commands/repo/init.js';
import RepoKey from '../commands/repo/key.js';
import RepoMaintenance from '../commands/repo/maintenance.js';
import RepoRestore from '../commands/repo/restore.js';
import RepoSnapshots from '../commands/repo/snapshots.js';
import RestoreHelper from '../commands/restore-helper.js';
import RestoreCancel from '../commands/restore/cancel.js';
import RestoreCreate from '../commands/restore/create.js';
import RestoreDelete from '../commands/restore/delete.js';
import RestoreDescribe from '../commands/restore/describe.js';
import RestoreGet from '../commands/restore/get.js';
import RestoreLogs from '../commands/restore/logs.js';
import ScheduleCreate from '../commands/schedule/create.js';
import ScheduleDelete from '../commands/schedule/delete.js';
import ScheduleDescribe from '../commands/schedule/describe.js';
import ScheduleGet from '../commands/schedule/get.js';
import SchedulePause from '../commands/schedule/pause.js';
import ScheduleUnpause from '../commands/schedule/unpause.js';
import Server from '../commands/server.js';
import Uninstall from '../commands/uninstall.js';
import Version from '../commands/version.js';

export { execute } from '@oclif/core';

export const COMMANDS = {
  'backup-location:create': BackupLocationCreate,
  'backup-location:get': BackupLocationGet,
  'backup-location:set': BackupLocationSet,
  'backup:cancel': BackupCancel,
  'backup:create': BackupCreate,
  'backup:delete': BackupDelete,
  'backup:describe': BackupDescribe,
  'backup:download': BackupDownload,
  'backup:get': BackupGet,
  'backup:logs': BackupLogs,
  'client:config:get': ClientConfigGet,
  'client:config:set': ClientConfigSet,
  'data-mover:backup': DataMoverBackup,
  'data-mover:restore': DataMoverRestore,
  'debug': Debug,
  'install': Install,
  'node-agent:server': NodeAgentServer,
  'plugin:add': PluginAdd,
  'plugin:get': PluginGet,
  'plugin:remove': PluginRemove,
  'pod-volume:backup': PodVolumeBackup,
  'pod-volume:restore': PodVolumeRestore,
  'repo:backup': RepoBackup,
  'repo:check': RepoCheck,
  'repo:get': RepoGet,
  'repo:init': RepoInit,
  'repo:key': RepoKey,
  'repo:maintenance': RepoMaintenance,
  'repo:restore': RepoRestore,
  'repo:snapshots': RepoSnapshots,
  'restore-helper': RestoreHelper,
  'restore:cancel': RestoreCancel,
  'restore:create': RestoreCreate,
  'restore:delete': RestoreDelete,
  'restore:describe': RestoreDescribe,
  'restore:get': RestoreGet,
  'restore:logs': RestoreLogs,
  'schedule:create': ScheduleCreate,
  'schedule:delete': ScheduleDelete,
  'schedule:describe': ScheduleDescribe,
  'schedule:get': ScheduleGet,
  'schedule:pause': SchedulePause,
  'schedule:unpause': ScheduleUnpause,
  'server': Server,
  'uninstall': Uninstall,
  'version': Version,
};
