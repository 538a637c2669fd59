/**
 * Target namespaces of a restore: each is created once, from the backed-up Namespace object when the backup has
 * it (labels, annotations and spec carried over under the mapped name), else bare. A namespace that is still
 * terminating (deleted just before the restore) is waited for, with a deadline.
 */
import { pollUntil } from '../../kube/wait.js';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { isApiAlreadyExists, type ObjectClient } from './dynamic-client.js';
import { resetMetadataAndStatus, withRestoreLabels } from './sanitize.js';

export interface NamespaceEnsurerOptions {
  client: ObjectClient;
  backupName: string;
  restoreName: string;
  /** Backed-up Namespace objects by their original name. */
  fromBackup: ReadonlyMap<string, UnstructuredObject>;
  terminatingTimeoutMs: number;
  pollIntervalMs?: number;
}

export type EnsureOutcome = 'created' | 'existed';

export class NamespaceEnsurer {
  private readonly done = new Map<string, EnsureOutcome>();

  constructor(private readonly opts: NamespaceEnsurerOptions) {}

  /** Makes sure `target` exists; `source` is the namespace's name in the backup. */
  async ensure(source: string, target: string): Promise<EnsureOutcome> {
    const known = this.done.get(target);
    if (known) return known;
    const outcome = await this.ensureOnce(source, target);
    this.done.set(target, outcome);
    return outcome;
  }

  private async ensureOnce(source: string, target: string): Promise<EnsureOutcome> {
    const { client } = this.opts;
    const nsRef = { apiVersion: 'v1', kind: 'Namespace', name: target };
    await pollUntil(
      async () => {
        const ns = await client.get(nsRef);
        const phase = (ns?.status as { phase?: string } | undefined)?.phase;
        return { done: phase !== 'Terminating', state: phase ? `namespace ${target} is ${phase}` : 'absent' };
      },
      { what: `namespace ${target} to finish terminating`, timeoutMs: this.opts.terminatingTimeoutMs, intervalMs: this.opts.pollIntervalMs ?? 1000 },
    );
    if (await client.get(nsRef)) return 'existed';
    const backedUp = this.opts.fromBackup.get(source);
    const obj = backedUp
      ? resetMetadataAndStatus(backedUp)
      : ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: target } } as UnstructuredObject);
    obj.metadata.name = target;
    delete obj.metadata.namespace;
    // The namespace lifecycle controller owns the finalizers list of a namespace's spec.
    withRestoreLabels(obj, this.opts.backupName, this.opts.restoreName);
    try {
      await client.create(obj);
      return 'created';
    } catch (err) {
      if (isApiAlreadyExists(err)) return 'existed';
      throw err;
    }
  }
}
