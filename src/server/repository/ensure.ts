/**
 * `ensureRepository`: the BackupRepository for (location, volume namespace, kopia), found by Velero's three labels
 * or created with Velero's name, then awaited until the controller has made it Ready. Used by whatever needs a
 * repository (the backup controller when it creates PodVolumeBackups).
 */
import {
  BackupRepositoryPhase,
  Kinds,
  newBackupRepository,
  parseBackupRepository,
  type BackupRepository,
} from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import { OncePerKey } from '../../base/once-per-key.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { isAlreadyExists } from '../../kube/errors.js';
import { pollUntil } from '../../kube/wait.js';
import { KopiaRepositoryType, maintenanceFrequencyText, pickRepository, repositoryLabels, repositoryName, repositorySelector, type RepositoryIdentity } from './naming.js';

export class RepositoryNotReadyError extends Error {
  constructor(
    readonly repositoryName: string,
    readonly reason: string,
  ) {
    super(`backup repository ${repositoryName} is not ready: ${reason}`);
    this.name = 'RepositoryNotReadyError';
  }
}

export interface EnsureRepositoryOptions {
  kube: Kube;
  /** The install namespace (where BackupRepositories and locations live). */
  namespace: string;
  /** BackupStorageLocation name. */
  bsl: string;
  volumeNamespace: string;
  /** How long to wait for Ready (default 5 minutes). */
  timeoutMs?: number;
  /** `spec.maintenanceFrequency` of a repository created here (default 1h, Velero's kopia default). */
  maintenanceFrequencyMs?: number;
  signal?: AbortSignal;
}

export interface EnsuredRepository {
  repository: BackupRepository;
  /** True when this call created the BackupRepository object. */
  created: boolean;
}

/** Finds or creates the BackupRepository object, without waiting. */
export async function findOrCreateRepository(opts: EnsureRepositoryOptions): Promise<EnsuredRepository> {
  const client = customClient<BackupRepository>(opts.kube, Kinds.BackupRepository, parseBackupRepository);
  const id: RepositoryIdentity = { bsl: opts.bsl, volumeNamespace: opts.volumeNamespace, repositoryType: KopiaRepositoryType };
  const existing = pickRepository(await client.list(opts.namespace, repositorySelector(id)), id);
  if (existing) return { repository: existing, created: false };
  const name = repositoryName(id);
  try {
    const repository = await client.create(
      newBackupRepository({
        namespace: opts.namespace,
        name,
        labels: repositoryLabels(id),
        spec: {
          volumeNamespace: opts.volumeNamespace,
          backupStorageLocation: opts.bsl,
          repositoryType: KopiaRepositoryType,
          maintenanceFrequency: maintenanceFrequencyText(opts.maintenanceFrequencyMs),
        },
      }),
    );
    return { repository, created: true };
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    // Someone else created it a moment ago.
    const raced = await client.get(opts.namespace, name);
    if (!raced) throw err;
    return { repository: raced, created: false };
  }
}

/**
 * The Ready BackupRepository for (bsl, volumeNamespace). Throws RepositoryNotReadyError when the controller marks it
 * NotReady (the reason names what to fix), and a timeout error when it stays New.
 */
export async function ensureRepository(opts: EnsureRepositoryOptions): Promise<EnsuredRepository> {
  const client = customClient<BackupRepository>(opts.kube, Kinds.BackupRepository, parseBackupRepository);
  const found = await findOrCreateRepository(opts);
  const name = found.repository.metadata.name ?? '';
  const ready = await pollUntil<BackupRepository>(
    async () => {
      const repo = await client.get(opts.namespace, name);
      if (!repo) throw new RepositoryNotReadyError(name, 'it was deleted while waiting for it');
      const phase = repo.status?.phase ?? BackupRepositoryPhase.New;
      if (phase === BackupRepositoryPhase.Ready) return { done: true, value: repo };
      if (phase === BackupRepositoryPhase.NotReady) throw new RepositoryNotReadyError(name, repo.status?.message ?? 'no reason given');
      return { done: false, state: `phase ${phase}` };
    },
    { what: `backup repository ${name} to become Ready`, timeoutMs: opts.timeoutMs ?? 5 * 60_000, intervalMs: 250, ...(opts.signal ? { signal: opts.signal } : {}) },
  );
  return { repository: ready ?? found.repository, created: found.created };
}

/**
 * The repository a backup's volumes of `volumeNamespace` go to (the backup's location), Ready, with a log line saying
 * so: what the pod-volume and the data-mover backup both need before they create their first object there.
 */
export async function ensureBackupRepository(
  opts: { kube: Kube; namespace: string; backup: { spec?: { storageLocation?: string | undefined } | undefined }; repositoryTimeoutMs?: number | undefined; signal?: AbortSignal | undefined },
  volumeNamespace: string,
  log: Logger,
): Promise<void> {
  const r = await ensureRepository({
    kube: opts.kube,
    namespace: opts.namespace,
    bsl: opts.backup.spec?.storageLocation ?? '',
    volumeNamespace,
    ...(opts.repositoryTimeoutMs ? { timeoutMs: opts.repositoryTimeoutMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  log.info({ repository: r.repository.metadata.name, volumeNamespace, created: r.created }, 'Backup repository is ready');
}

/**
 * `ensure` for a whole restore: run once per location and volume namespace, its callers sharing the run; a failure
 * is not remembered, so the next caller for the pair tries again.
 */
export function ensuredOncePerLocation(ensure: (bsl: string, volumeNamespace: string) => Promise<void>): (bsl: string, volumeNamespace: string) => Promise<void> {
  const runs = new OncePerKey();
  return (bsl, volumeNamespace) => runs.run(`${bsl}/${volumeNamespace}`, () => ensure(bsl, volumeNamespace));
}
