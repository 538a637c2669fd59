/**
 * Backup and restore end to end through the filesystem storage provider: cairn installed with `--provider
 * filesystem` and its root under the cluster's run directory (a hostPath every node and this test see alike, like
 * network storage mounted everywhere). A namespace is backed up with --wait, the files land under
 * `<root>/<bucket>/backups/<name>/` with Velero's names, logs, describe details and the contents can be read
 * (a file:// location has no URL a client could fetch), the namespace is deleted and restored, the objects equal the
 * originals minus server-set fields, and `backup delete` removes the backup's directory.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyWithNamespace, clusterInfo, kubectl, namespacesGone } from '../support/cluster.js';
import { cairn, locationAvailable } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const NS = 'cairn-e2e-fs';
const APP = 'e2e-fs-shop';
const BUCKET = 'backups';
const BACKUP = 'fs-shop-1';
const RESTORE = 'fs-shop-1-restore';

const APP_OBJECTS = `
apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: ${APP}, labels: { app: shop }, annotations: { note: kept } }
data: { colour: blue, size: large }
---
apiVersion: v1
kind: Secret
metadata: { name: token, namespace: ${APP}, labels: { app: shop } }
type: Opaque
stringData: { token: not-a-real-fs-secret }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: shop, namespace: ${APP}, labels: { app: shop } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: shop, namespace: ${APP}, labels: { app: shop } }
spec:
  replicas: 1
  selector: { matchLabels: { app: shop } }
  template:
    metadata: { labels: { app: shop } }
    spec:
      serviceAccountName: shop
      containers:
        - name: shop
          image: registry.k8s.io/pause:3.10
          env: [{ name: COLOUR, valueFrom: { configMapKeyRef: { name: settings, key: colour } } }]
`;

/** The objects compared before and after: kind (kubectl resource) and name in APP. */
const COMPARED = [
  ['configmap', 'settings'],
  ['secret', 'token'],
  ['serviceaccount', 'shop'],
  ['deployment', 'shop'],
] as const;

type Json = Record<string, unknown>;

/** Fields the API server (or a controller) sets, and the labels a restore adds: never equal across a restore. */
function withoutServerFields(obj: Json): Json {
  const copy = structuredClone(obj);
  delete copy.status;
  const meta = (copy.metadata ?? {}) as Json;
  for (const f of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink']) delete meta[f];
  const labels = (meta.labels ?? {}) as Record<string, string>;
  for (const k of Object.keys(labels)) if (k.startsWith('velero.io/')) delete labels[k];
  const annotations = (meta.annotations ?? {}) as Record<string, string>;
  delete annotations['deployment.kubernetes.io/revision'];
  if (Object.keys(annotations).length === 0) delete meta.annotations;
  return copy;
}

async function getJson(kind: string, name: string): Promise<Json> {
  return JSON.parse((await kubectl(['get', kind, name, '-n', APP, '-o', 'json'])).stdout) as Json;
}

describe('backup and restore through the filesystem storage provider', () => {
  let kubeconfig: string;
  let root: string;
  let backupDir: string;
  const originals = new Map<string, Json>();
  const run = (args: string[]) => cairn([...args, '-n', NS], { kubeconfig });

  beforeAll(async () => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    root = join(info.runDir, 'fs-storage');
    backupDir = join(root, BUCKET, 'backups', BACKUP);
    // A previous run on a reused cluster may have left its namespaces terminating and its files behind.
    await namespacesGone([NS, APP], 120_000);
    rmSync(join(root, BUCKET), { recursive: true, force: true });

    const install = await cairn(
      [
        'install', '-n', NS, '--provider', 'filesystem', '--bucket', BUCKET, '--backup-location-config', `root=${root}`,
        '--image', info.image, '--kubelet-root-dir', info.kubeletRootDir, '--wait', '--timeout', '4m',
      ],
      { kubeconfig },
    );
    expect(install.exitCode, install.stderr).toBe(0);
    await applyWithNamespace(APP, APP_OBJECTS, { labels: { team: 'shop' } });
    await kubectl(['rollout', 'status', 'deployment/shop', '-n', APP, '--timeout=120s'], { timeoutMs: 130_000 });
    for (const [kind, name] of COMPARED) originals.set(`${kind}/${name}`, await getJson(kind, name));
  });

  afterAll(async () => {
    // Not `cairn uninstall`: it removes the CRDs, which other tests sharing a reused cluster still need.
    await kubectl(['delete', 'namespace', APP, NS, '--ignore-not-found', '--wait=false'], { allowFailure: true });
  });

  it('shows the filesystem location Available', async () => {
    await locationAvailable(run);
    const table = await run(['backup-location', 'get']);
    expect(table.exitCode, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/\ndefault\s+filesystem\s+backups\s+Available\s/);
  });

  it('backs up the namespace with --wait into files with Velero names', async () => {
    const r = await run(['backup', 'create', BACKUP, '--include-namespaces', APP, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Backup completed with status: Completed.');

    expect(readdirSync(backupDir).sort()).toEqual(
      [
        'velero-backup.json',
        `${BACKUP}.tar.gz`,
        `${BACKUP}-logs.gz`,
        `${BACKUP}-results.gz`,
        `${BACKUP}-resource-list.json.gz`,
        `${BACKUP}-volumeinfo.json.gz`,
        ...readdirSync(backupDir).filter((f) => /-(itemoperations|podvolumebackups|csi-volumesnapshot\w*|volumesnapshots)\.json\.gz$/.test(f)),
      ].sort(),
    );
    const meta = JSON.parse(readFileSync(join(backupDir, 'velero-backup.json'), 'utf8')) as Json;
    expect(meta).toMatchObject({ kind: 'Backup', metadata: { name: BACKUP }, spec: { includedNamespaces: [APP] } });
    const resources = JSON.parse(gunzipSync(readFileSync(join(backupDir, `${BACKUP}-resource-list.json.gz`))).toString()) as Record<string, string[]>;
    expect(resources['v1/ConfigMap']).toContain(`${APP}/settings`);
    expect(resources['v1/Secret']).toContain(`${APP}/token`);
    expect(resources['v1/ServiceAccount']).toContain(`${APP}/shop`);
    expect(resources['apps/v1/Deployment']).toContain(`${APP}/shop`);
    const tar = gunzipSync(readFileSync(join(backupDir, `${BACKUP}.tar.gz`))).toString('latin1');
    expect(tar).toContain(`resources/deployments.apps/namespaces/${APP}/shop.json`);
    expect(tar).toContain(`resources/secrets/namespaces/${APP}/token.json`);
  });

  // A filesystem location has only file:// URLs: the CLI asks the server's /download/ endpoint through the API
  // server's pod proxy (real nodes), and when that is refused (the kubelet stand-in's pods have loopback addresses,
  // which Kubernetes never proxies to) reads the file:// path on this machine, which sees the shared root. Either way
  // the user sees the file.
  it('reads logs, describe details and the contents of a file:// location', async () => {
    const dl = join(mkdtempSync(join(tmpdir(), 'cairn-e2e-fs-dl-')), 'shop.tar.gz');
    const [logs, details, download] = await Promise.all([
      run(['backup', 'logs', BACKUP]),
      run(['backup', 'describe', BACKUP, '--details']),
      run(['backup', 'download', BACKUP, '-o', dl]),
    ]);
    expect(download.exitCode, download.stderr).toBe(0);
    expect(readFileSync(dl)).toEqual(readFileSync(join(backupDir, `${BACKUP}.tar.gz`)));
    expect(logs.exitCode, logs.stderr).toBe(0);
    expect(logs.stdout).toContain(BACKUP);
    expect(logs.stdout).not.toContain('not-a-real-fs-secret');
    expect(details.exitCode, details.stderr).toBe(0);
    expect(details.stdout).toMatch(/\nPhase:\s+Completed\n/);
    expect(details.stdout).toContain('\nStorage Location:  default\n');
    expect(details.stdout).toContain('\nResource List:\n');
    expect(details.stdout).toContain('\n  apps/v1/Deployment:\n');
    expect(details.stdout).toContain(`    - ${APP}/shop\n`);
    expect(details.stdout).toContain(`    - ${APP}/token\n`);
  });

  it('restores the deleted namespace with --wait; objects equal the originals minus server-set fields', async () => {
    await kubectl(['delete', 'namespace', APP, '--wait=true', '--timeout=120s'], { timeoutMs: 130_000 });
    const r = await run(['restore', 'create', RESTORE, '--from-backup', BACKUP, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Restore completed with status: Completed.');

    const ns = JSON.parse((await kubectl(['get', 'namespace', APP, '-o', 'json'])).stdout) as { metadata: { labels: Record<string, string> } };
    expect(ns.metadata.labels).toMatchObject({ team: 'shop' });
    for (const [kind, name] of COMPARED) {
      const restored = await getJson(kind, name);
      expect((restored.metadata as { labels: Record<string, string> }).labels).toMatchObject({
        'velero.io/backup-name': BACKUP,
        'velero.io/restore-name': RESTORE,
      });
      expect(withoutServerFields(restored), `${kind}/${name}`).toEqual(withoutServerFields(originals.get(`${kind}/${name}`) ?? {}));
    }
    const secret = (await getJson('secret', 'token')) as { data: Record<string, string> };
    expect(Buffer.from(secret.data.token ?? '', 'base64').toString()).toBe('not-a-real-fs-secret');
    await kubectl(['rollout', 'status', 'deployment/shop', '-n', APP, '--timeout=120s'], { timeoutMs: 130_000 });

    expect(readdirSync(join(root, BUCKET, 'restores', RESTORE))).toEqual(
      expect.arrayContaining([`restore-${RESTORE}-logs.gz`, `restore-${RESTORE}-results.gz`]),
    );
    const logs = await run(['restore', 'logs', RESTORE]);
    expect(logs.exitCode, logs.stderr).toBe(0);
    expect(logs.stdout).toContain(RESTORE);
    expect(logs.stdout).not.toContain('not-a-real-fs-secret');
  });

  it('backup delete removes the backup directory and the Backup', async () => {
    const r = await run(['backup', 'delete', BACKUP, '--confirm']);
    expect(r.exitCode, r.stderr).toBe(0);
    await waitFor(async () => (await run(['backup', 'get', BACKUP])).exitCode === 4, { timeoutMs: 120_000, intervalMs: 1000, description: 'backup gone' });
    expect(existsSync(backupDir)).toBe(false);
    // Velero deletes the backup's restores' files with it.
    expect(existsSync(join(root, BUCKET, 'restores', RESTORE))).toBe(false);
  });
});
