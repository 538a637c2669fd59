/**
 * The flags that describe a backup's spec, shared by `backup create` and `schedule create` (whose backup template
 * they describe), as Velero's schedule create binds its backup create options. Parsed by buildBackupSpec()
 * (./backups.ts).
 */
import { Flags } from '@oclif/core';

/** Flags taking `--flag`, `--flag=true|false` and `--no-flag` (Velero's OptionalBool). */
export const BACKUP_TRI_STATE = ['include-cluster-resources', 'default-volumes-to-fs-backup', 'snapshot-volumes', 'snapshot-move-data'];

export const backupSpecFlags = {
  'include-namespaces': Flags.string({ description: 'Namespaces to include, comma-separated ("*" = all, the default).' }),
  'exclude-namespaces': Flags.string({ description: 'Namespaces to leave out, comma-separated.' }),
  'include-resources': Flags.string({ description: 'Resources to include (resource or resource.group), comma-separated; default all.' }),
  'exclude-resources': Flags.string({ description: 'Resources to leave out, comma-separated.' }),
  'include-cluster-resources': Flags.boolean({ allowNo: true, description: 'Include cluster-scoped resources (unset: only those related to included namespaces).' }),
  'include-cluster-scoped-resources': Flags.string({ description: 'Cluster-scoped resources to include, comma-separated ("*" = all); not with the three flags above.' }),
  'exclude-cluster-scoped-resources': Flags.string({ description: 'Cluster-scoped resources to leave out, comma-separated.' }),
  'include-namespace-scoped-resources': Flags.string({ description: 'Namespace-scoped resources to include, comma-separated ("*" = all, the default).' }),
  'exclude-namespace-scoped-resources': Flags.string({ description: 'Namespace-scoped resources to leave out, comma-separated.' }),
  'ordered-resources': Flags.string({ description: 'Back up these objects first, in this order: "pods=ns1/pod1,ns1/pod2;persistentvolumes=pv1".' }),
  'resource-policies-configmap': Flags.string({ description: 'ConfigMap (in the install namespace) holding resource policies: volume policies and scoped filters.' }),
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
  labels: Flags.string({ description: 'Labels for the object, key=value pairs separated by commas.' }),
  annotations: Flags.string({ description: 'Annotations for the object, key=value pairs separated by commas.' }),
};
