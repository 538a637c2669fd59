import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { formatJson, formatYaml } from '../../cli/output.js';
import { backupClient, buildBackup, dataUploadClient, givenBackupSpecFlags, podVolumeBackupClient } from '../../cli/backups.js';
import { BACKUP_TRI_STATE, backupSpecFlags } from '../../cli/backup-flags.js';
import { backupFromScheduleNamed } from '../../cli/schedules.js';
import { locationClient } from '../../cli/backup-locations.js';
import { followReading, submitAndFollow, submitFlags } from '../../cli/submit.js';
import { Labels, isBackupDone, labelValue, selectorFor, type Backup } from '../../api/index.js';
import { connect, type Kube } from '../../kube/client.js';


export default class BackupCreate extends BaseCommand<typeof BackupCreate> {
  static override summary = 'Create a backup.';
  static override examples = [
    '<%= config.bin %> backup create shop --include-namespaces shop --wait',
    '<%= config.bin %> backup create nightly --selector app=web --ttl 72h',
    '<%= config.bin %> backup create everything --exclude-namespaces kube-system --snapshot-volumes=false',
    '<%= config.bin %> backup create db --include-namespaces db --snapshot-move-data --wait',
    '<%= config.bin %> backup create --from-schedule nightly --wait',
  ];
  static override args = { name: Args.string({ description: 'Name of the backup (optional with --from-schedule).' }) };
  static override flags = {
    ...backupSpecFlags,
    'from-schedule': Flags.string({ description: "Make the backup from this schedule's template (named <schedule>-<yyyyMMddHHmmss> unless NAME is given); no other backup flag may be given." }),
    ...submitFlags('backup'),
  };

  protected override readonly triStateFlags = BACKUP_TRI_STATE;

  async run(): Promise<void> {
    const namespace = this.flags.namespace;
    let kube: Kube | undefined;
    const kubeOnce = () => (kube ??= connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const fromSchedule = this.flags['from-schedule'];
    let backup: Backup;
    if (fromSchedule !== undefined) {
      // The schedule's template is the whole spec: a flag that would change it is refused rather than ignored.
      const given = givenBackupSpecFlags(this.flags);
      if (given.length) throw new UsageError(given[0] ?? '--from-schedule', `cannot be combined with --from-schedule: the backup takes its spec, labels and annotations from the schedule (${given.join(', ')})`);
      backup = await backupFromScheduleNamed(kubeOnce(), { namespace, schedule: fromSchedule, name: this.args.name, now: new Date() });
    } else {
      if (!this.args.name) throw new UsageError('NAME', 'a backup name is required, unless you are creating based on a schedule (--from-schedule)');
      backup = buildBackup({ ...this.flags, name: this.args.name, namespace });
    }
    const name = backup.metadata.name ?? '';
    if (this.flags.output) {
      this.out(this.flags.output === 'json' ? formatJson(backup) : formatYaml(backup));
      return;
    }
    const cluster = kubeOnce();
    const location = this.flags['storage-location'];
    if (location && !(await locationClient(cluster).get(namespace, location))) {
      throw new UsageError('--storage-location', `backup storage location "${location}" not found in namespace "${namespace}"`);
    }
    const client = backupClient(cluster);
    const pvbs = podVolumeBackupClient(cluster);
    const dus = dataUploadClient(cluster);
    const code = await submitAndFollow({
      kind: 'backup',
      name,
      namespace,
      create: () => client.create(backup),
      wait: this.flags.wait,
      isDone: isBackupDone,
      out: (l) => this.out(l),
      read: async () => {
        const b = await client.get(namespace, name);
        if (!b) return undefined;
        const selector = selectorFor({ [Labels.BackupName]: labelValue(name) });
        return followReading(b.status ?? {}, b.status?.progress?.itemsBackedUp, async () => (await Promise.all([pvbs.list(namespace, selector), dus.list(namespace, selector)])).flat());
      },
    });
    if (code !== 0) this.exit(code);
  }
}
