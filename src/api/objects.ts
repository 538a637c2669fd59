/**
 * Constructors for velero.io objects with apiVersion, kind and metadata filled in, used by the CLI, the server and
 * tests alike. They build values only; nothing is validated or sent anywhere.
 */
import { DefaultNamespace } from './constants.js';
import { Kinds, type KindName, type ObjectOf, type SpecOf } from './kinds.js';
import type { ObjectMeta, OwnerReference } from './meta.js';

export interface NewObjectOptions<S> {
  /** Default: "velero". */
  namespace?: string;
  /** Give name or generateName. */
  name?: string;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  spec: S;
}

/** Same as NewObjectOptions, for kinds whose spec has no required field (spec defaults to {}). */
export type NewObjectOptionalSpec<S> = Omit<NewObjectOptions<S>, 'spec'> & { spec?: S };

/** Any kind's object from its spec and metadata. */
export function newObject<K extends KindName>(kind: K, options: NewObjectOptions<SpecOf<K>>): ObjectOf<K> {
  const metadata: ObjectMeta = { namespace: options.namespace ?? DefaultNamespace };
  if (options.name !== undefined) metadata.name = options.name;
  if (options.generateName !== undefined) metadata.generateName = options.generateName;
  if (options.labels !== undefined) metadata.labels = { ...options.labels };
  if (options.annotations !== undefined) metadata.annotations = { ...options.annotations };
  if (options.ownerReferences !== undefined) metadata.ownerReferences = options.ownerReferences.map((o) => ({ ...o }));
  if (options.finalizers !== undefined) metadata.finalizers = [...options.finalizers];
  return { apiVersion: Kinds[kind].apiVersion, kind, metadata, spec: options.spec } as ObjectOf<K>;
}

/** An owner reference to `owner` marked as its controller (how Velero links PVBs to Backups, PVRs to Restores). */
export function controllerReference(owner: {
  apiVersion: string;
  kind: string;
  metadata: { name?: string | undefined; uid?: string | undefined };
}): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
  };
}

const withEmptySpec = <S>(options: NewObjectOptionalSpec<S>): NewObjectOptions<S> =>
  ({ ...options, spec: options.spec ?? ({} as S) });

export const newBackup = (o: NewObjectOptionalSpec<SpecOf<'Backup'>>) => newObject('Backup', withEmptySpec(o));
export const newRestore = (o: NewObjectOptionalSpec<SpecOf<'Restore'>>) => newObject('Restore', withEmptySpec(o));
export const newSchedule = (o: NewObjectOptions<SpecOf<'Schedule'>>) => newObject('Schedule', o);
export const newBackupStorageLocation = (o: NewObjectOptions<SpecOf<'BackupStorageLocation'>>) =>
  newObject('BackupStorageLocation', o);
export const newVolumeSnapshotLocation = (o: NewObjectOptions<SpecOf<'VolumeSnapshotLocation'>>) =>
  newObject('VolumeSnapshotLocation', o);
export const newPodVolumeBackup = (o: NewObjectOptions<SpecOf<'PodVolumeBackup'>>) => newObject('PodVolumeBackup', o);
export const newPodVolumeRestore = (o: NewObjectOptions<SpecOf<'PodVolumeRestore'>>) =>
  newObject('PodVolumeRestore', o);
export const newBackupRepository = (o: NewObjectOptions<SpecOf<'BackupRepository'>>) =>
  newObject('BackupRepository', o);
export const newDeleteBackupRequest = (o: NewObjectOptions<SpecOf<'DeleteBackupRequest'>>) =>
  newObject('DeleteBackupRequest', o);
export const newDownloadRequest = (o: NewObjectOptions<SpecOf<'DownloadRequest'>>) => newObject('DownloadRequest', o);
export const newServerStatusRequest = (o: NewObjectOptionalSpec<SpecOf<'ServerStatusRequest'>>) =>
  newObject('ServerStatusRequest', withEmptySpec(o));
export const newDataUpload = (o: NewObjectOptions<SpecOf<'DataUpload'>>) => newObject('DataUpload', o);
export const newDataDownload = (o: NewObjectOptions<SpecOf<'DataDownload'>>) => newObject('DataDownload', o);
