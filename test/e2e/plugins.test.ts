/**
 * Velero plugins through cairn, end to end on the test bed: `install --plugins` with Velero's AWS and GCP plugins
 * and the test bed's Go plugins (written against Velero's framework); the init containers copy the binaries into
 * the server's /plugins, the server lists them at start (`plugin get`). Then, through the CLI:
 *   - a namespace backed up and restored through Velero's AWS plugin against MinIO (asked for with
 *     --prefer-plugin velero.io/aws), with Velero's layout (cairn's built-in S3 store reads it back);
 *   - the test plugins' effects: annotations written at backup and restore, a Secret added as a related item, an
 *     item block, an item a restore action skips, a plugin log line with the plugin's name in the backup log;
 *   - an asynchronous BackupItemAction v2: WaitingForPluginOperations, progress in `describe --details`, then
 *     Completed; another cancelled by the item operation timeout, which reaches the plugin, and one by `backup cancel`;
 *   - a plugin crashing mid-item: that item fails with the plugin's panic, the backup goes on, the next works;
 *   - a location served by the test plugins' directory store, and one served by the GCP plugin, Unavailable
 *     with Google's own error (no cloud is reachable here).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyWithNamespace, clusterInfo, kubectl, namespacesGone } from '../support/cluster.js';
import { cairn, locationAvailable } from '../support/cli.js';
import { writeCredentialsFile } from '../support/server-install.js';
import { podVolumeDir, type PodRef } from '../support/node-paths.js';
import { waitFor } from '../support/wait.js';
import { pushPluginImages } from '../../tools/local-cluster/images/test-images.js';
import { ensureToolBinary } from '../../tools/local-cluster/toolchain.js';
import { S3ObjectStore } from '../../src/plugins/object-store/index.js';
import { BackupStore } from '../../src/storage/backup-store.js';

const NS = 'cairn-e2e-plugins';
const APP = 'e2e-plugins-app';
const COPY = 'e2e-plugins-copy';
const PREFIX = 'e2e-plugins';
const AWS_IMAGE = 'velero/velero-plugin-for-aws:v1.14.3';
const GCP_IMAGE = 'velero/velero-plugin-for-gcp:v1.14.2';
const TEST_IMAGE = 'cairn.local/cairn-test-plugins:dev';
/** Plugin images the test bed makes from the toolchain's builds, as Velero's are (binary in /plugins, `cp` entrypoint). */
const PLUGIN_IMAGES = [
  { key: 'veleroPluginForAws', name: 'velero-plugin-for-aws', repository: 'velero/velero-plugin-for-aws', tag: 'v1.14.3' },
  { key: 'veleroPluginForGcp', name: 'velero-plugin-for-gcp', repository: 'velero/velero-plugin-for-gcp', tag: 'v1.14.2' },
  { key: 'cairnTestPlugins', name: 'cairn-test-plugins', repository: 'cairn-test-plugins', tag: 'dev' },
] as const;
/** The test plugins' directory store writes inside the server's container, into its /scratch emptyDir. */
const STORE_ROOT = '/scratch/directory-store';
const say = (line: string) => process.stderr.write(`[plugins e2e] ${line}\n`);

const APP_OBJECTS = `
apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: ${APP}, labels: { app: shop, example.cairn.io/include-secret: token } }
data: { colour: blue }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: grouped, namespace: ${APP}, labels: { app: shop, example.cairn.io/group-with: grouped-secret } }
data: { a: b }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: not-restored, namespace: ${APP}, labels: { app: shop, example.cairn.io/skip-restore: "true" } }
data: { a: b }
---
apiVersion: v1
kind: Secret
metadata: { name: token, namespace: ${APP} }
stringData: { token: not-a-real-secret }
---
apiVersion: v1
kind: Secret
metadata: { name: grouped-secret, namespace: ${APP} }
stringData: { x: "y" }
`;

interface Described {
  status?: { phase?: string; errors?: number; backupItemOperationsAttempted?: number; backupItemOperationsCompleted?: number; backupItemOperationsFailed?: number };
}

describe('Velero plugins through cairn', () => {
  let kubeconfig: string;
  const run = (args: string[]) => cairn([...args, '-n', NS], { kubeconfig });
  const phaseOf = async (kind: 'backup' | 'restore', name: string) => ((JSON.parse((await run([kind, 'get', name, '-o', 'json'])).stdout || '{}') as Described).status?.phase ?? '');
  const waitPhase = (kind: 'backup' | 'restore', name: string, phases: string[], timeoutMs = 240_000) =>
    waitFor(async () => (phases.includes(await phaseOf(kind, name)) ? phaseOf(kind, name) : undefined), { timeoutMs, intervalMs: 1000, description: `${kind} ${name} in ${phases.join('|')}` });

  beforeAll(async () => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    // The plugin binaries are built from the Go module proxy once, then cached; their images go into the registry.
    const specs = [];
    for (const p of PLUGIN_IMAGES) specs.push({ ...p, binary: await ensureToolBinary(p.key, say) });
    await pushPluginImages(info.registry.url, specs, say);
    const creds = writeCredentialsFile('cairn-e2e-plugins-');
    await namespacesGone([NS, APP, COPY], 120_000);
    const install = await cairn(
      [
        'install', '-n', NS, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', PREFIX, '--secret-file', creds,
        '--backup-location-config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`,
        '--plugins', `${AWS_IMAGE},${GCP_IMAGE},${TEST_IMAGE}`, '--prefer-plugin', 'velero.io/aws',
        '--image', info.image,
      ],
      { kubeconfig },
    );
    expect(install.exitCode, install.stderr).toBe(0);
    // Progress every 2s instead of 10s, so a few-second operation shows some.
    await kubectl(['-n', NS, 'patch', 'deployment', 'cairn', '--type=json', '-p', JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--item-operation-sync-frequency=2s' }])]);
    await kubectl(['-n', NS, 'rollout', 'status', 'deployment/cairn', '--timeout=300s']);
    await locationAvailable(run, 'default', 180_000); // through the AWS plugin
    await applyWithNamespace(APP, APP_OBJECTS);
  }, 60 * 60_000);

  afterAll(async () => {
    await kubectl(['delete', 'namespace', APP, COPY, NS, '--ignore-not-found', '--wait=false'], { allowFailure: true });
  });

  it('install copied the plugins into the server, which lists them with Velero kinds (plugin get)', async () => {
    const d = JSON.parse((await kubectl(['-n', NS, 'get', 'deployment', 'cairn', '-o', 'json'])).stdout) as { spec: { template: { spec: { initContainers: { name: string; image: string }[] } } } };
    expect(d.spec.template.spec.initContainers.map((c) => `${c.name}=${c.image}`)).toEqual([
      `velero-velero-plugin-for-aws=${AWS_IMAGE}`,
      `velero-velero-plugin-for-gcp=${GCP_IMAGE}`,
      `cairn-local-cairn-test-plugins=${TEST_IMAGE}`,
    ]);
    const got = await run(['plugin', 'get']);
    expect(got.exitCode, got.stderr).toBe(0);
    const rows = got.stdout.trim().split('\n').map((l) => l.split(/\s+/).join(' '));
    expect(rows[0]).toBe('NAME KIND');
    for (const row of [
      'example.cairn.io/annotate BackupItemAction',
      'example.cairn.io/async BackupItemActionV2',
      'example.cairn.io/record-delete DeleteItemAction',
      'example.cairn.io/group ItemBlockAction',
      'example.cairn.io/directory ObjectStore',
      'velero.io/aws ObjectStore',
      'velero.io/gcp ObjectStore',
      'example.cairn.io/annotate RestoreItemAction',
      'example.cairn.io/skip RestoreItemActionV2',
      'velero.io/aws VolumeSnapshotter',
      'velero.io/gcp VolumeSnapshotter',
      'velero.io/pod BackupItemAction',
    ]) {
      expect(rows).toContain(row);
    }
    // One velero.io/aws object store: the plugin, asked for in place of the built-in.
    expect(rows.filter((r) => r === 'velero.io/aws ObjectStore')).toHaveLength(1);
  });

  it('backs up a namespace through Velero AWS plugin, with the test plugins effects, in Velero layout', async () => {
    // The Secrets carry no app label: only the plugins bring them in (a related item, an item block). A related item
    // of a resource the backup excludes would be left out, as in Velero, so secrets are included and the label
    // selector does the choosing.
    const r = await run(['backup', 'create', 'through-aws', '--include-namespaces', APP, '--include-resources', 'configmaps,secrets', '-l', 'app=shop', '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Backup completed with status: Completed.');
    const details = await run(['backup', 'describe', 'through-aws', '--details']);
    expect(details.stdout).toContain(`    - ${APP}/token\n`);
    expect(details.stdout).toContain(`    - ${APP}/grouped-secret\n`);
    const logs = await run(['backup', 'logs', 'through-aws']);
    expect(logs.stdout).toMatch(/level=info msg="annotating config map" .*pluginName=cairn-test-plugins/);
    // The files are where Velero's layout puts them: cairn's built-in S3 store reads them back.
    const { s3 } = clusterInfo();
    const builtIn = new BackupStore(new S3ObjectStore({ bucket: s3.bucket, prefix: PREFIX, endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } }));
    expect(await builtIn.listBackupDirs()).toContain('through-aws');
    const archive = await run(['backup', 'download', 'through-aws', '-o', join(mkdtempSync(join(tmpdir(), 'dl-')), 'b.tar.gz')]);
    expect(archive.exitCode, archive.stderr).toBe(0);
  });

  it('restores it through the same plugin, with the restore action annotation and the skipped item', async () => {
    const r = await run(['restore', 'create', 'from-aws', '--from-backup', 'through-aws', '--namespace-mappings', `${APP}:${COPY}`, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const cm = JSON.parse((await kubectl(['-n', COPY, 'get', 'configmap', 'settings', '-o', 'json'])).stdout) as { metadata: { annotations: Record<string, string> }; data: Record<string, string> };
    expect(cm.data).toEqual({ colour: 'blue' });
    expect(cm.metadata.annotations['example.cairn.io/backed-up-by']).toBe('example.cairn.io/annotate in backup through-aws');
    expect(cm.metadata.annotations['example.cairn.io/restored-by']).toBe('example.cairn.io/annotate in restore from-aws');
    expect((await kubectl(['-n', COPY, 'get', 'secret', 'token'], { allowFailure: true })).exitCode).toBe(0);
    expect((await kubectl(['-n', COPY, 'get', 'configmap', 'not-restored'], { allowFailure: true })).exitCode).not.toBe(0);
  });

  it('waits for an asynchronous plugin operation, showing its progress, then completes', async () => {
    await kubectl(['-n', APP, 'create', 'configmap', 'slow-one', '--from-literal=a=b']);
    await kubectl(['-n', APP, 'label', 'configmap', 'slow-one', 'example.cairn.io/async=60']);
    const create = await run(['backup', 'create', 'async', '--include-namespaces', APP, '--include-resources', 'configmaps', '-l', 'example.cairn.io/async']);
    expect(create.exitCode, create.stderr).toBe(0);
    // Sixty seconds, counted from the item's backup: on a busy machine the backup may reach WaitingForPluginOperations
    // half a minute later, and one `describe` can take several seconds; the operation must still be seen part done.
    await waitPhase('backup', 'async', ['WaitingForPluginOperations']);
    const progress = await waitFor(
      async () => {
        const d = (await run(['backup', 'describe', 'async', '--details'])).stdout;
        return /Progress:\s+([1-9]|[1-5][0-9]) of 60 complete \(seconds\)/.test(d) ? d : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'describe --details showing the operation part done' },
    );
    expect(progress).toContain(`Operation for configmaps ${APP}/slow-one:`);
    expect(progress).toMatch(/Backup Item Action Plugin:\s+example.cairn.io\/async/);
    expect(progress).toMatch(/Progress description:\s+counting seconds/);
    expect(await waitPhase('backup', 'async', ['Completed', 'PartiallyFailed'])).toBe('Completed');
    const done = (await run(['backup', 'describe', 'async', '--details'])).stdout;
    expect(done).toMatch(/Phase:\s+Completed/);
    expect(done).toMatch(/Progress:\s+60 of 60 complete \(seconds\)/);
  });

  it('cancels an operation past the item operation timeout; the cancel reaches the plugin', async () => {
    await kubectl(['-n', APP, 'create', 'configmap', 'too-slow', '--from-literal=a=b']);
    await kubectl(['-n', APP, 'label', 'configmap', 'too-slow', 'example.cairn.io/async=600']);
    const create = await run(['backup', 'create', 'cancelled', '--include-namespaces', APP, '--include-resources', 'configmaps', '-l', 'example.cairn.io/async=600', '--item-operation-timeout', '5s']);
    expect(create.exitCode, create.stderr).toBe(0);
    expect(await waitPhase('backup', 'cancelled', ['Completed', 'PartiallyFailed'])).toBe('PartiallyFailed');
    const d = (await run(['backup', 'describe', 'cancelled', '--details'])).stdout;
    expect(d).toMatch(/Operation Error:\s+Asynchronous action timed out/);
    const logs = (await run(['backup', 'logs', 'cancelled'])).stdout;
    expect(logs).toMatch(/level=info msg="cancel received" .*pluginName=cairn-test-plugins/);
    // The operations phase's lines are appended to the backup log: the failure as an error line, in the results' words.
    expect(logs).toMatch(/level=error msg="Asynchronous action timed out, plugin: example\.cairn\.io\/async"/);
  });

  it('cancels the running operations of a canceled backup; the cancel reaches the plugin', async () => {
    const create = await run(['backup', 'create', 'canceled-op', '--include-namespaces', APP, '--include-resources', 'configmaps', '-l', 'example.cairn.io/async=600']);
    expect(create.exitCode, create.stderr).toBe(0);
    await waitPhase('backup', 'canceled-op', ['WaitingForPluginOperations']);
    const operationID = await waitFor(async () => /Operation ID:\s+(\S+)/.exec((await run(['backup', 'describe', 'canceled-op', '--details'])).stdout)?.[1], {
      timeoutMs: 60_000,
      intervalMs: 1000,
      description: 'the operation ID in describe --details',
    });
    const cancel = await run(['backup', 'cancel', 'canceled-op', '--confirm']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    expect(await waitPhase('backup', 'canceled-op', ['Canceled'])).toBe('Canceled');
    // The backup's own log went with its files: the plugin's line is in the server's log.
    const serverLog = (await kubectl(['-n', NS, 'logs', 'deployment/cairn', '-c', 'cairn'])).stdout;
    expect(serverLog.split('\n').some((l) => l.includes('cancel received') && l.includes(operationID) && l.includes('cairn-test-plugins')), `no "cancel received" for ${operationID} in the server log`).toBe(true);
  });

  it('fails the item a plugin crashes on with its panic, and goes on', async () => {
    // The operations of the cases above are not this backup's business: one would hold it for ten minutes.
    await kubectl(['-n', APP, 'delete', 'configmap', 'slow-one', 'too-slow', '--ignore-not-found']);
    await kubectl(['-n', APP, 'create', 'configmap', 'crasher', '--from-literal=a=b']);
    await kubectl(['-n', APP, 'label', 'configmap', 'crasher', 'example.cairn.io/crash=true']);
    const r = await run(['backup', 'create', 'crash', '--include-namespaces', APP, '--include-resources', 'configmaps', '--wait']);
    expect(r.stdout).toContain('Backup completed with status: PartiallyFailed.');
    const d = (await run(['backup', 'describe', 'crash', '--details'])).stdout;
    expect(d).toMatch(/panic: crashing on purpose while backing up e2e-plugins-app\/crasher/);
    expect(d).toContain(`    - ${APP}/settings\n`);
    await kubectl(['-n', APP, 'delete', 'configmap', 'crasher']);
    const next = await run(['backup', 'create', 'after-crash', '--include-namespaces', APP, '--include-resources', 'configmaps', '--wait']);
    expect(next.stdout).toContain('Backup completed with status: Completed.');
  });

  it('backs up to and restores from a location a plugin directory store serves', async () => {
    await kubectl(['-n', APP, 'delete', 'configmap', 'slow-one', 'too-slow', 'crasher', '--ignore-not-found']);
    const loc = await run(['backup-location', 'create', 'directory', '--provider', 'example.cairn.io/directory', '--bucket', 'plugin-bucket', '--prefix', 'cluster-a', '--config', `root=${STORE_ROOT}`]);
    expect(loc.exitCode, loc.stderr).toBe(0);
    await locationAvailable(run, 'directory');
    const r = await run(['backup', 'create', 'in-directory', '--include-namespaces', APP, '--storage-location', 'directory', '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    // Read where the node keeps the server's /scratch, as an operator with a shell on the node would.
    const server = JSON.parse((await kubectl(['-n', NS, 'get', 'pods', '-l', 'deploy=cairn', '-o', 'json'])).stdout) as { items: PodRef[] };
    const scratch = await podVolumeDir(server.items[0] ?? {}, 'scratch');
    const backupDir = join(scratch, 'directory-store', 'plugin-bucket', 'cluster-a', 'backups', 'in-directory');
    expect(readdirSync(backupDir).sort()).toContain('in-directory.tar.gz');
    const log = gunzipSync(readFileSync(join(backupDir, 'in-directory-logs.gz'))).toString();
    expect(log).toContain('Backed up all items');
    await kubectl(['delete', 'namespace', COPY, '--wait=true', '--timeout=120s'], { allowFailure: true });
    const restore = await run(['restore', 'create', 'from-directory', '--from-backup', 'in-directory', '--namespace-mappings', `${APP}:${COPY}`, '--wait']);
    expect(restore.exitCode, `${restore.stdout}\n${restore.stderr}`).toBe(0);
    expect((await kubectl(['-n', COPY, 'get', 'configmap', 'grouped'], { allowFailure: true })).exitCode).toBe(0);
  });

  it('makes a GCP location Unavailable with the plugin own error when no cloud is reachable', async () => {
    await kubectl(['-n', NS, 'create', 'secret', 'generic', 'gcp-credentials', '--from-literal=sa={"type":"service_account","project_id":"cairn-test","client_email":"t@cairn-test.iam.gserviceaccount.com","private_key":"","token_uri":"https://oauth2.googleapis.com/token"}']);
    const loc = await run(['backup-location', 'create', 'gcs', '--provider', 'gcp', '--bucket', 'cairn-test-bucket', '--credential', 'gcp-credentials=sa']);
    expect(loc.exitCode, loc.stderr).toBe(0);
    const message = await waitFor(
      async () => {
        const l = JSON.parse((await run(['backup-location', 'get', 'gcs', '-o', 'json'])).stdout) as { status?: { phase?: string; message?: string } };
        return l.status?.phase === 'Unavailable' ? (l.status.message ?? '') : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000, description: 'backup location gcs Unavailable' },
    );
    say(`GCP location: ${message}`);
    expect(message).toMatch(/google|oauth2|googleapis|credentials|private key/i);
  });
});
