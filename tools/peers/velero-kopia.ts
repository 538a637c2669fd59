/**
 * Repositories as Velero makes them, made with the kopia Velero v1.17 bundles (the project-velero kopia fork, built
 * from the Go module proxy by tools/peers/install-kopia.sh --velero, cached under ~/.cache/cairn/bin): created with
 * kopia's defaults (Velero passes kopia's default hash, encryption and splitter), under `<prefix>/kopia/<namespace>/`
 * of a bucket (S3, as Velero's kopia S3 backend opens it: bucket, prefix, endpoint, no TLS for http) or of a
 * directory (kopia's filesystem storage, sharded), with compression `none` for data as Velero's policy sets it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Velero's default repository password (the Secret Velero creates holds it). */
export const VELERO_DEFAULT_PASSWORD = 'static-passw0rd';

let binary: string | undefined;

/** Builds Velero's kopia once (minutes on a cold cache) and returns its path. */
export function veleroKopia(): string {
  binary ??= execFileSync('bash', [resolve(import.meta.dirname, 'install-kopia.sh'), '--velero'], { encoding: 'utf8', timeout: 1_200_000, stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1)!;
  return binary;
}

export type KopiaStorage =
  | { kind: 'filesystem'; path: string }
  | { kind: 's3'; bucket: string; prefix: string; endpoint: string; accessKeyId: string; secretAccessKey: string; region: string };

export interface VeleroKopiaRepo {
  /** Runs a kopia command against the repository (connected with its own config file). */
  kopia(args: string[]): Promise<string>;
  /** Snapshots a directory as Velero's uploader would (compression none) and returns the snapshot (manifest) ID. */
  snapshot(source: string, tags?: Record<string, string>): Promise<string>;
  /**
   * `kopia snapshot restore` of a snapshot into a directory, timed. With `coldCache`, kopia's local cache of
   * contents is cleared first, as a data mover pod starts with none.
   */
  restore(snapshotId: string, target: string, parallel?: number, coldCache?: boolean): Promise<number>;
}

export async function createVeleroKopiaRepository(storage: KopiaStorage, password = VELERO_DEFAULT_PASSWORD): Promise<VeleroKopiaRepo> {
  const bin = veleroKopia();
  const home = mkdtempSync(join(tmpdir(), 'velero-kopia-'));
  const env = { ...process.env, KOPIA_CHECK_FOR_UPDATES: 'false', KOPIA_PASSWORD: password };
  const common = [`--config-file=${join(home, 'repository.config')}`, `--log-dir=${join(home, 'logs')}`];
  const kopia = async (args: string[]) => (await run(bin, [...common, ...args], { env, maxBuffer: 64 << 20 })).stdout;
  const where =
    storage.kind === 'filesystem'
      ? ['filesystem', `--path=${storage.path}`]
      : (() => {
          const url = new URL(storage.endpoint);
          return [
            's3',
            `--bucket=${storage.bucket}`,
            `--prefix=${storage.prefix}`,
            `--endpoint=${url.host}`,
            ...(url.protocol === 'http:' ? ['--disable-tls'] : []),
            `--access-key=${storage.accessKeyId}`,
            `--secret-access-key=${storage.secretAccessKey}`,
            `--region=${storage.region}`,
          ];
        })();
  await kopia(['repository', 'create', ...where, `--cache-directory=${join(home, 'cache')}`, '--block-hash=BLAKE2B-256-128', '--encryption=AES256-GCM-HMAC-SHA256', '--object-splitter=DYNAMIC-4M-BUZHASH']);
  await kopia(['policy', 'set', '--global', '--compression=none']);
  return {
    kopia,
    async snapshot(source, tags = {}) {
      const out = await kopia(['snapshot', 'create', source, '--json', ...Object.entries(tags).map(([k, v]) => `--tags=${k}:${v}`)]);
      const id = /"id":"([0-9a-f]+)"/.exec(out)?.[1];
      if (!id) throw new Error(`kopia snapshot create printed no ID: ${out.slice(0, 300)}`);
      return id;
    },
    async restore(snapshotId, target, parallel, coldCache) {
      if (coldCache) await kopia(['cache', 'clear']);
      const started = process.hrtime.bigint();
      await kopia(['snapshot', 'restore', snapshotId, target, ...(parallel ? [`--parallel=${parallel}`] : [])]);
      return Number(process.hrtime.bigint() - started) / 1e6;
    },
  };
}
