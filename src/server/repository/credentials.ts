/**
 * The repository password: Secret `velero-repo-credentials`, key `repository-password`, in the install namespace
 * (Velero's names, so either tool finds it). Velero falls back to a fixed default password; cairn creates the Secret
 * with a random one instead. The password only unwraps each repository's key file: every repository also has its
 * own random master keys (docs/repository-format.md). The value never leaves this module except to open a repository.
 */
import { randomBytes } from 'node:crypto';
import { RepoCredentials } from '../../api/index.js';
import type { Kube } from '../../kube/client.js';
import { isAlreadyExists, undefinedIfNotFound } from '../../kube/errors.js';

export interface RepositoryPasswordOptions {
  kube: Kube;
  /** The install namespace. */
  namespace: string;
}

export interface RepositoryPassword {
  password: string;
  /** True when this call created the Secret. */
  created: boolean;
}

async function readPassword(opts: RepositoryPasswordOptions): Promise<string | undefined> {
  const secret = await undefinedIfNotFound(() => opts.kube.core.readNamespacedSecret({ name: RepoCredentials.SecretName, namespace: opts.namespace }));
  if (!secret) return undefined;
  const data = secret.data?.[RepoCredentials.Key];
  if (data === undefined) throw new Error(`Secret ${RepoCredentials.SecretName} in namespace ${opts.namespace} has no key "${RepoCredentials.Key}"`);
  return Buffer.from(data, 'base64').toString('utf8');
}

/** The repository password, creating the Secret with a random one when it does not exist yet. */
export async function ensureRepositoryPassword(opts: RepositoryPasswordOptions): Promise<RepositoryPassword> {
  const existing = await readPassword(opts);
  if (existing !== undefined) return { password: existing, created: false };
  const password = randomBytes(32).toString('base64url');
  try {
    await opts.kube.core.createNamespacedSecret({
      namespace: opts.namespace,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: { name: RepoCredentials.SecretName, namespace: opts.namespace, labels: { component: 'velero' } },
        data: { [RepoCredentials.Key]: Buffer.from(password).toString('base64') },
      },
    });
    return { password, created: true };
  } catch (err) {
    // Another server (or a restart) created it first: use theirs, every repository must share one password.
    if (!isAlreadyExists(err)) throw err;
    const raced = await readPassword(opts);
    if (raced === undefined) throw new Error(`Secret ${RepoCredentials.SecretName} in namespace ${opts.namespace} vanished while being created`, { cause: err });
    return { password: raced, created: false };
  }
}
