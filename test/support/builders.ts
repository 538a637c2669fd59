/**
 * Object builders for unit tests, in the manner of Velero's pkg/builder: start from a minimal valid object, say only
 * what the test is about, build. Each build() returns a fresh object.
 *
 *   dataPath('pvb-1').phase('Accepted').node('node-a').build()
 *   pod('pvb-1').running().build()
 *   backup('b1').phase('InProgress').annotation('k', 'v').build()
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { DataPathObject } from '../../src/agent/controllers/data-path-decisions.js';
import { ApiVersionV1, DefaultNamespace, type Backup, type Restore } from '../../src/api/index.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The common part: metadata the builders share. */
abstract class Builder<T extends { metadata?: Mutable<NonNullable<V1Pod['metadata']>> | undefined }> {
  protected abstract readonly obj: T;

  protected get meta(): NonNullable<T['metadata']> {
    this.obj.metadata ??= {};
    return this.obj.metadata as NonNullable<T['metadata']>;
  }

  label(key: string, value: string): this {
    this.meta.labels = { ...this.meta.labels, [key]: value };
    return this;
  }

  annotation(key: string, value: string): this {
    this.meta.annotations = { ...this.meta.annotations, [key]: value };
    return this;
  }

  finalizers(...names: string[]): this {
    this.meta.finalizers = names;
    return this;
  }

  /** Being deleted (deletionTimestamp set). */
  deleting(at = new Date(0)): this {
    this.meta.deletionTimestamp = at;
    return this;
  }

  uid(uid: string): this {
    this.meta.uid = uid;
    return this;
  }

  created(at: Date): this {
    this.meta.creationTimestamp = at;
    return this;
  }

  build(): T {
    return structuredClone(this.obj);
  }
}

/** A PVB, PVR, DataUpload or DataDownload as the node-agent's state machine sees it. */
export class DataPathBuilder extends Builder<DataPathObject & { spec: { cancel?: boolean; node?: string }; status?: DataPathObject['status'] & { node?: string } }> {
  protected readonly obj: DataPathObject & { spec: { cancel?: boolean; node?: string }; status?: DataPathObject['status'] & { node?: string } };

  constructor(name: string, namespace = DefaultNamespace) {
    super();
    this.obj = { apiVersion: ApiVersionV1, kind: 'PodVolumeBackup', metadata: { name, namespace, uid: `uid-${name}` }, spec: {} };
  }

  kind(kind: string): this {
    this.obj.kind = kind;
    return this;
  }

  phase(phase: string): this {
    this.obj.status = { ...this.obj.status, phase };
    return this;
  }

  /** The node that works on it (status.node). */
  node(node: string): this {
    this.obj.status = { ...this.obj.status, node };
    return this;
  }

  cancel(): this {
    this.obj.spec.cancel = true;
    return this;
  }

  acceptedAt(at: Date): this {
    this.obj.status = { ...this.obj.status, acceptedTimestamp: at.toISOString() };
    return this;
  }

  message(message: string): this {
    this.obj.status = { ...this.obj.status, message };
    return this;
  }
}

export const dataPath = (name: string, namespace?: string) => new DataPathBuilder(name, namespace);

export class PodBuilder extends Builder<V1Pod> {
  protected readonly obj: V1Pod;

  constructor(name: string, namespace = DefaultNamespace) {
    super();
    this.obj = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, uid: `uid-${name}` }, spec: { containers: [{ name: 'main', image: 'cairn' }] }, status: { phase: 'Pending' } };
  }

  phase(phase: string): this {
    this.obj.status = { ...this.obj.status, phase };
    return this;
  }

  running(): this {
    return this.phase('Running');
  }

  /** Ended well: phase Succeeded, `container` terminated with exit code 0 and `message` (its termination message). */
  succeeded(container: string, message: string): this {
    this.obj.status = {
      ...this.obj.status,
      phase: 'Succeeded',
      containerStatuses: [{ name: container, image: 'cairn', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed', message } } }],
    };
    return this;
  }

  /** A container waiting for a reason (ImagePullBackOff...). */
  waiting(reason: string, message = ''): this {
    this.obj.status = { ...this.obj.status, containerStatuses: [{ name: 'main', image: 'cairn', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message } } }] };
    return this;
  }
}

export const pod = (name: string, namespace?: string) => new PodBuilder(name, namespace);

/** A velero.io object the server runs through phases (Backup, Restore): a spec, a status with its phase. */
abstract class PhasedBuilder<T extends Backup | Restore> extends Builder<T> {
  protected readonly obj: T;

  protected constructor(kind: T['kind'], name: string, namespace: string, spec: T['spec']) {
    super();
    this.obj = { apiVersion: ApiVersionV1, kind, metadata: { name, namespace, uid: `uid-${name}` }, spec } as T;
  }

  phase(phase: NonNullable<T['status']>['phase']): this {
    return this.status({ phase } as Partial<NonNullable<T['status']>>);
  }

  spec(spec: Partial<T['spec']>): this {
    this.obj.spec = { ...this.obj.spec, ...spec };
    return this;
  }

  status(status: Partial<NonNullable<T['status']>>): this {
    this.obj.status = { ...this.obj.status, ...status };
    return this;
  }
}

export class BackupBuilder extends PhasedBuilder<Backup> {
  constructor(name: string, namespace = DefaultNamespace) {
    super('Backup', name, namespace, {});
  }
}

export const backup = (name: string, namespace?: string) => new BackupBuilder(name, namespace);

export class RestoreBuilder extends PhasedBuilder<Restore> {
  constructor(name: string, namespace = DefaultNamespace) {
    super('Restore', name, namespace, { backupName: '' });
  }
}

export const restore = (name: string, namespace?: string) => new RestoreBuilder(name, namespace);
