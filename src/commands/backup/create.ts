import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CairnError, UsageError } from '../../base/errors.js';
import { formatJson, formatYaml } from '../../cli/output.js';
import { createProgress } from '../../cli/progress.js';
import { backupClient, buildBackup, dataUploadClient, normaliseTriStateArgv, podVolumeBackupClient, volumeBytes } from '../../cli/backups.js';
import { locationClient } from '../../cli/backup-locations.js';
import { interruptSignal, waitAndReport } from '../../cli/wait.js';
import { Labels, isBackupDone, labelValue, selectorFor } from '../../api/index.js';
import { connect } from '../../kube/client.js';
import { isAlreadyExists } from '../../kube/errors.js';

const TRI_STATE = ['include-cluster-resources', 'default-volumes-to-fs-backup', 'snapshot-volumes', 'snapshot-move-data'];

export default class BackupCreate extends BaseCommand<typeof BackupCreate> {
  static override summary = 'Create a backup.';
  static override examples = [
    '<%= config.bin %> backup create shop --include-namespaces shop --wait',
    '<%= config.bin %> backup create nightly --selector app=web --ttl 72h',
    '<%= config.bin %> backup create everything --exclude-namespaces kube-system --snapshot-volumes=false',
    '<%= config.bin %> backup create db --include-namespaces db --snapshot-move-data --wait',
  ];
  static override args = { name: Args.string({ required: true, description: 'Name of the backup.' }) };
  static override flags = {
    'include-namespaces': Flags.string({ description: 'Namespaces to include, comma-separated ("*" = all).', default: '*' }),
    'exclude-namespaces': Flags.string({ description: 'Namespaces to leave out, comma-separated.' }),
    'include-resources': Flags.string({ description: 'Resources to include (resource or resource.group), comma-separated; default all.' }),
    'exclude-resources': Flags.string({ description: 'Resources to leave out, comma-separated.' }),
    'include-cluster-resources': Flags.boolean({ allowNo: true, description: 'Include cluster-scoped resources (unset: only those related to included namespaces).' }),
    selector: Flags.string({ char: 'l', description: 'Only back up objects matching this label selector.' }),
    'or-selector': Flags.string({ description: 'Back up objects matching any of these selectors ("a=b or c=d").' }),
    ttl: Flags.string({ description: 'How long to keep the backup (Go duration, e.g. 72h); default: the server default (720h).' }),
    'storage-location': Flags.string({ description: 'Backup storage location to write to; default: the default location.' }),
    'default-volumes-to-fs-backup': Flags.boolean({ allowNo: true, description: 'Back up all pod volumes with file-system backup unless opted out (unset: server default).' }),
    'snapshot-volumes': Flags.boolean({ allowNo: true, description: 'Take snapshots of persistent volumes (unset: auto).' }),
    'snapshot-move-data': Flags.boolean({
      allowNo: true,
      description: 'Move the data of CSI snapshots of PVCs not taken by file-system backup into the backup repository (DataUploads); the local snapshots are not kept (unset: false).',
    }),
    'data-mover': Flags.string({ description: 'Data mover that moves the snapshot data with --snapshot-move-data ("velero" or unset = the node agent).' }),
    'item-operation-timeout': Flags.string({ description: 'How long to wait for asynchronous item operations such as data uploads (Go duration; default: the server default, 4h).' }),
    'csi-snapshot-timeout': Flags.string({ description: 'How long to wait for a CSI snapshot to be ready (Go duration; default: the server default, 10m).' }),
    labels: Flags.string({ description: 'Labels for the Backup object, key=value pairs separated by commas.' }),
    annotations: Flags.string({ description: 'Annotations for the Backup object, key=value pairs separated by commas.' }),
    wait: Flags.boolean({ char: 'w', description: 'Wait for the backup to finish; exit non-zero unless it Completed.', default: false }),
    output: Flags.option({ char: 'o', options: ['json', 'yaml'] as const, description: 'Print the Backup instead of submitting it.' })(),
  };

  public override async init(): Promise<void> {
    this.argv = normaliseTriStateArgv(this.argv, TRI_STATE);
    await super.init();
  }

  async run(): Promise<void> {
    const namespace = this.flags.namespace;
    const backup = buildBackup({ ...this.flags, name: this.args.name, namespace });
    if (this.flags.output) {
      this.out(this.flags.output === 'json' ? formatJson(backup) : formatYaml(backup));
      return;
    }
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const location = this.flags['storage-location'];
    if (location && !(await locationClient(kube).get(namespace, location))) {
      throw new UsageError('--storage-location', `backup storage location "${location}" not found in namespace "${namespace}"`);
    }
    const client = backupClient(kube);
    try {
      await client.create(backup);
    } catch (err) {
      if (isAlreadyExists((err as CairnError).cause)) throw new UsageError('NAME', `backup "${this.args.name}" already exists in namespace "${namespace}"`);
      throw err;
    }
    this.out(`Backup request "${this.args.name}" submitted successfully.`);
    if (!this.flags.wait) {
      this.out(`Run \`cairn backup describe ${this.args.name}\` or \`cairn backup logs ${this.args.name}\` for more details.`);
      return;
    }
    const pvbs = podVolumeBackupClient(kube);
    const dus = dataUploadClient(kube);
    const interrupt = interruptSignal();
    try {
      const code = await waitAndReport({
        kind: 'backup',
        name: this.args.name,
        isDone: isBackupDone,
        progress: createProgress({ label: `Backup ${this.args.name}` }),
        signal: interrupt.signal,
        out: (l) => this.out(l),
        read: async () => {
          const b = await client.get(namespace, this.args.name);
          if (!b) return undefined;
          const s = b.status ?? {};
          // Volume bytes are extra information: a failed read of them never ends the wait.
          const selector = selectorFor({ [Labels.BackupName]: labelValue(this.args.name) });
          const bytes = await Promise.all([pvbs.list(namespace, selector), dus.list(namespace, selector)]).then(([p, d]) => volumeBytes([...p, ...d]), () => ({}));
          return { phase: s.phase ?? 'New', done: s.progress?.itemsBackedUp ?? 0, total: s.progress?.totalItems ?? 0, validationErrors: s.validationErrors ?? undefined, failureReason: s.failureReason, ...bytes };
        },
      });
      if (code !== 0) this.exit(code);
    } finally {
      interrupt.dispose();
    }
  }
}
