import { Args, Flags } from '@oclif/core';
import { select } from '@inquirer/prompts';
import { BaseCommand } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { formatJson, formatYaml } from '../../cli/output.js';
import { canPrompt } from '../../cli/progress.js';
import { backupClient, formatGoTime } from '../../cli/backups.js';
import { buildRestore, podVolumeRestoreClient, restorableBackups, restoreClient } from '../../cli/restores.js';
import { scheduleClient } from '../../cli/schedules.js';
import { followReading, submitAndFollow, submitFlags } from '../../cli/submit.js';
import { Labels, isRestoreDone, labelValue, selectorFor } from '../../api/index.js';
import { connect, type Kube } from '../../kube/client.js';

const TRI_STATE = ['include-cluster-resources', 'restore-volumes', 'preserve-nodeports'];

export default class RestoreCreate extends BaseCommand<typeof RestoreCreate> {
  static override summary = 'Create a restore from a backup, or from the latest Completed backup of a schedule.';
  static override description =
    'Without --from-backup or --from-schedule, in a terminal, offers the Completed and PartiallyFailed backups to choose from; without a terminal one of them is required.';
  static override examples = [
    '<%= config.bin %> restore create --from-backup shop --wait',
    '<%= config.bin %> restore create shop-copy --from-backup shop --namespace-mappings shop:shop-copy',
    '<%= config.bin %> restore create --from-backup shop --existing-resource-policy update',
    '<%= config.bin %> restore create --from-schedule nightly --wait',
  ];
  static override args = { name: Args.string({ description: 'Name of the restore (default: <backup or schedule>-<YYYYMMDDHHMMSS>).' }) };
  static override flags = {
    'from-backup': Flags.string({ description: 'Backup to restore from.' }),
    'from-schedule': Flags.string({ description: "Restore the schedule's latest Completed backup (chosen by the server when the restore starts)." }),
    'include-namespaces': Flags.string({ description: 'Namespaces to restore, comma-separated ("*" = all in the backup).', default: '*' }),
    'exclude-namespaces': Flags.string({ description: 'Namespaces not to restore, comma-separated.' }),
    'include-resources': Flags.string({ description: 'Resources to restore (resource or resource.group), comma-separated; default all.' }),
    'exclude-resources': Flags.string({ description: 'Resources not to restore, comma-separated.' }),
    'include-cluster-resources': Flags.boolean({ allowNo: true, description: 'Restore cluster-scoped resources (unset: auto).' }),
    'namespace-mappings': Flags.string({ description: 'Restore namespaces under other names: src1:dst1,src2:dst2.' }),
    'existing-resource-policy': Flags.string({ description: 'What to do with objects that already exist: none (keep them) or update.' }),
    selector: Flags.string({ char: 'l', description: 'Only restore objects matching this label selector.' }),
    'or-selector': Flags.string({ description: 'Restore objects matching any of these selectors ("a=b or c=d").' }),
    'restore-volumes': Flags.boolean({ allowNo: true, description: 'Restore persistent volumes (unset: auto).' }),
    'preserve-nodeports': Flags.boolean({ allowNo: true, description: 'Keep the node ports of Services (unset: auto).' }),
    'resource-modifier-configmap': Flags.string({ description: 'ConfigMap (in the install namespace) holding resource modifiers: rules that patch restored objects.' }),
    labels: Flags.string({ description: 'Labels for the Restore object, key=value pairs separated by commas.' }),
    annotations: Flags.string({ description: 'Annotations for the Restore object, key=value pairs separated by commas.' }),
    ...submitFlags('restore'),
  };

  protected override readonly triStateFlags = TRI_STATE;

  async run(): Promise<void> {
    const namespace = this.flags.namespace;
    let kube: Kube | undefined;
    const kubeOnce = () => (kube ??= connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context }));
    const fromSchedule = this.flags['from-schedule'];
    let fromBackup = this.flags['from-backup'];
    if (!fromBackup && !fromSchedule) {
      if (!canPrompt()) throw new UsageError('--from-backup', 'required (or --from-schedule) when no terminal is attached');
      fromBackup = await this.chooseBackup(kubeOnce(), namespace);
    }
    const restore = buildRestore({ ...this.flags, 'from-backup': fromBackup, name: this.args.name, namespace });
    const name = restore.metadata.name ?? '';
    if (this.flags.output) {
      this.out(this.flags.output === 'json' ? formatJson(restore) : formatYaml(restore));
      return;
    }
    const client = restoreClient(kubeOnce());
    if (fromSchedule) {
      if (!(await scheduleClient(kubeOnce()).get(namespace, fromSchedule))) {
        throw new UsageError('--from-schedule', `schedule "${fromSchedule}" not found in namespace "${namespace}"`);
      }
    } else if (fromBackup && !(await backupClient(kubeOnce()).get(namespace, fromBackup))) {
      throw new UsageError('--from-backup', `backup "${fromBackup}" not found in namespace "${namespace}"`);
    }
    const pvrs = podVolumeRestoreClient(kubeOnce());
    const code = await submitAndFollow({
      kind: 'restore',
      name,
      namespace,
      create: () => client.create(restore),
      wait: this.flags.wait,
      isDone: isRestoreDone,
      out: (l) => this.out(l),
      read: async () => {
        const r = await client.get(namespace, name);
        if (!r) return undefined;
        return followReading(r.status ?? {}, r.status?.progress?.itemsRestored, () => pvrs.list(namespace, selectorFor({ [Labels.RestoreName]: labelValue(name) })));
      },
    });
    if (code !== 0) this.exit(code);
  }

  private async chooseBackup(kube: Kube, namespace: string): Promise<string> {
    const choices = restorableBackups(await backupClient(kube).list(namespace));
    if (!choices.length) throw new UsageError('--from-backup', `no Completed or PartiallyFailed backups in namespace "${namespace}" to restore from`);
    return select({
      message: 'Restore from which backup?',
      choices: choices.map((b) => ({
        value: b.metadata.name ?? '',
        name: `${b.metadata.name} (${b.status?.phase}, ${formatGoTime(b.status?.startTimestamp) ?? 'not started'})`,
      })),
    });
  }
}
