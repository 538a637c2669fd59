/**
 * The backup and restore CLI end to end against cairn installed in the local cluster: back up a namespace with
 * --wait, read it back with get/describe/logs/download, restore it into a mapped namespace with --wait, and delete
 * the backup (its storage objects and the Backup object disappear). Everything goes through the CLI as a user
 * would run it; kubectl and S3 only check the result.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { applyWithNamespace, clusterInfo, kubectl, namespacesGone, s3Client } from '../support/cluster.js';
import { cairn, locationAvailable } from '../support/cli.js';
import { writeCredentialsFile } from '../support/server-install.js';
import { waitFor } from '../support/wait.js';

const NS = 'cairn-e2e-cli';
const APP = 'e2e-cli-shop';
const COPY = 'e2e-cli-shop-copy';
const PREFIX = 'e2e-cli';
const BACKUP = 'shop-1';
const RESTORE = 'shop-1-copy';
/** A namespace with the CRDs but no cairn server: a Backup there stays New, so --wait waits until interrupted. */
const NO_SERVER = 'e2e-cli-no-server';
const RUN_JS = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

const APP_OBJECTS = `
apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: ${APP}, labels: { app: shop } }
data: { colour: blue, size: large }
---
apiVersion: v1
kind: Secret
metadata: { name: token, namespace: ${APP}, labels: { app: shop } }
stringData: { token: not-a-real-secret }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: shop, namespace: ${APP} }
---
apiVersion: v1
kind: Service
metadata: { name: shop, namespace: ${APP} }
spec:
  selector: { app: shop }
  ports: [{ port: 80, targetPort: 8080 }]
`;

describe('backup and restore through the CLI', () => {
  let kubeconfig: string;
  const run = (args: string[]) => cairn([...args, '-n', NS], { kubeconfig });

  beforeAll(async () => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    const creds = writeCredentialsFile('cairn-e2e-cli-');
    // A previous run's namespaces may still be terminating on a reused cluster.
    await namespacesGone([NS, APP, COPY, NO_SERVER], 120_000);
    const install = await cairn(
      [
        'install', '-n', NS, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', PREFIX, '--secret-file', creds,
        '--backup-location-config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`,
        '--image', info.image, '--wait', '--timeout', '4m',
      ],
      { kubeconfig },
    );
    expect(install.exitCode, install.stderr).toBe(0);
    await locationAvailable(run);
    await applyWithNamespace(APP, APP_OBJECTS);
  });

  afterAll(async () => {
    // Not `cairn uninstall`: it removes the CRDs, which other tests sharing a reused cluster still need.
    await kubectl(['delete', 'namespace', APP, COPY, NS, NO_SERVER, '--ignore-not-found', '--wait=false'], { allowFailure: true });
  });

  it('refuses bad input before submitting anything', async () => {
    const [bad, noLocation, noSource, printed] = await Promise.all([
      run(['backup', 'create', 'x', '--ttl', 'forever']),
      run(['backup', 'create', 'x', '--storage-location', 'nowhere']),
      run(['restore', 'create']),
      run(['backup', 'create', 'x', '--snapshot-volumes=false', '--no-include-cluster-resources', '--default-volumes-to-fs-backup', '-l', 'app=shop', '-o', 'json']),
    ]);
    // -o prints what would be submitted; both spellings of tri-state flags work.
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(JSON.parse(printed.stdout).spec).toEqual({
      includedNamespaces: ['*'],
      includeClusterResources: false,
      labelSelector: { matchLabels: { app: 'shop' } },
      defaultVolumesToFsBackup: true,
      snapshotVolumes: false,
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim()).toBe('error: --ttl: "forever" is not a duration (examples: 24h, 720h, 90m)');
    expect(noLocation.exitCode).toBe(2);
    expect(noLocation.stderr).toContain(`--storage-location: backup storage location "nowhere" not found in namespace "${NS}"`);
    expect(noSource.exitCode).toBe(2);
    expect(noSource.stderr.trim()).toBe('error: --from-backup: required (or --from-schedule) when no terminal is attached');
  });

  it('backs up a namespace with --wait and exits 0 when Completed', async () => {
    const r = await run(['backup', 'create', BACKUP, '--include-namespaces', APP, '--wait']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Backup request "${BACKUP}" submitted successfully.`);
    expect(r.stdout).toContain('Waiting for backup to complete. You may safely press ctrl-c to stop waiting - your backup will continue in the background.');
    expect(r.stdout).toContain(`Backup completed with status: Completed. You may check for more information using the commands \`cairn backup describe ${BACKUP}\` and \`cairn backup logs ${BACKUP}\`.`);
    // Not a TTY: plain progress lines on stderr, never carriage returns.
    expect(r.stderr).toMatch(new RegExp(`^Backup ${BACKUP}: Completed, \\d+/\\d+ items$`, 'm'));
    expect(r.stderr).not.toContain('\r');
  });

  it('--wait exits 1 and prints the reasons when the backup fails validation', async () => {
    const info = clusterInfo();
    const loc = await run([
      'backup-location', 'create', 'read-only', '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', `${PREFIX}-ro`,
      '--access-mode', 'ReadOnly', '--config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`,
    ]);
    expect(loc.exitCode, loc.stderr).toBe(0);
    const r = await run(['backup', 'create', 'to-read-only', '--include-namespaces', APP, '--storage-location', 'read-only', '--wait']);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout, r.stderr).toContain('Backup completed with status: FailedValidation.');
    expect(r.stderr).toContain('Backup "to-read-only" failed validation:\n');
    expect(r.stderr).toContain("backup can't be created because backup storage location read-only is currently in read-only mode");
  });

  it('Ctrl-C while waiting stops waiting, not the backup, and exits 130', async () => {
    await kubectl(['create', 'namespace', NO_SERVER]);
    const child = spawn(process.execPath, [RUN_JS, 'backup', 'create', 'waits', '-n', NO_SERVER, '--wait', '--kubeconfig', kubeconfig], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CI: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => stderr.includes('Backup waits: New'), { timeoutMs: 60_000, description: 'the CLI waiting on the backup' });
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stdout).toContain('Waiting for backup to complete.');
    expect(stderr).toContain('Stopped waiting; the backup continues in the background; see `cairn backup describe waits`.');
    // The Backup is still there: only the waiting stopped.
    const got = await cairn(['backup', 'get', 'waits', '-n', NO_SERVER, '-o', 'json'], { kubeconfig });
    expect(JSON.parse(got.stdout)).toMatchObject({ metadata: { name: 'waits' } });
  });

  it('lists and shows the backup', async () => {
    const [table, json] = await Promise.all([run(['backup', 'get', BACKUP]), run(['backup', 'get', BACKUP, '-o', 'json'])]);
    expect(table.exitCode, table.stderr).toBe(0);
    const [header, row] = table.stdout.trim().split('\n');
    expect(header).toMatch(/^NAME\s+STATUS\s+ERRORS\s+WARNINGS\s+CREATED\s+EXPIRES\s+STORAGE LOCATION\s+SELECTOR$/);
    expect(row).toMatch(new RegExp(`^${BACKUP}\\s+Completed\\s+0\\s+0\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\+0000 UTC\\s+29d\\s+default\\s+<none>$`));
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'Backup', metadata: { name: BACKUP }, spec: { includedNamespaces: [APP] }, status: { phase: 'Completed' } });
  });

  it('describes the backup in Velero sections, with --details listing the resources', async () => {
    const [d, details, json] = await Promise.all([
      run(['backup', 'describe', BACKUP]),
      run(['backup', 'describe', BACKUP, '--details']),
      run(['backup', 'describe', BACKUP, '--details', '-o', 'json']),
    ]);
    expect(d.exitCode, d.stderr).toBe(0);
    expect(d.stdout).toContain(`Name:         ${BACKUP}\nNamespace:    ${NS}\n`);
    expect(d.stdout).toContain('\nPhase:  Completed\n');
    expect(d.stdout).toContain(`\nNamespaces:\n  Included:  ${APP}\n  Excluded:  <none>\n`);
    expect(d.stdout).toContain('\nStorage Location:  default\n');
    expect(d.stdout).toMatch(/\nTotal items to be backed up:\s+\d+\nItems backed up:\s+\d+\n/);
    expect(d.stdout).not.toContain('\u001b[');

    expect(details.exitCode, details.stderr).toBe(0);
    expect(details.stdout).toContain('\nResource List:\n');
    expect(details.stdout).toContain('\n  v1/ConfigMap:\n');
    expect(details.stdout).toContain(`    - ${APP}/settings\n`);
    expect(details.stdout).toContain(`    - ${APP}/token\n`);

    const parsed = JSON.parse(json.stdout) as { kind: string; backup: { metadata: { name: string } }; details: { resourceList: Record<string, string[]> } };
    expect(parsed.kind).toBe('BackupDescription');
    expect(parsed.backup.metadata.name).toBe(BACKUP);
    expect(parsed.details.resourceList['v1/ConfigMap']).toContain(`${APP}/settings`);
  });

  it('prints the log and downloads the contents', async () => {
    const logs = await run(['backup', 'logs', BACKUP]);
    expect(logs.exitCode, logs.stderr).toBe(0);
    expect(logs.stdout.length).toBeGreaterThan(0);
    expect(logs.stdout).not.toContain('not-a-real-secret');

    const dir = mkdtempSync(join(tmpdir(), 'cairn-e2e-dl-'));
    const file = join(dir, 'shop.tar.gz');
    const dl = await run(['backup', 'download', BACKUP, '-o', file]);
    expect(dl.exitCode, dl.stderr).toBe(0);
    expect(dl.stdout.trim()).toBe(`Backup ${BACKUP} has been successfully downloaded to ${file}`);
    const tar = gunzipSync(readFileSync(file)).toString('latin1');
    expect(tar).toContain(`resources/configmaps/namespaces/${APP}/settings.json`);
    const again = await run(['backup', 'download', BACKUP, '-o', file]);
    expect(again.exitCode).toBe(2);
    expect(existsSync(file)).toBe(true);
  });

  it('restores into a mapped namespace with --wait; objects match the originals', async () => {
    const r = await run(['restore', 'create', RESTORE, '--from-backup', BACKUP, '--namespace-mappings', `${APP}:${COPY}`, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`Restore request "${RESTORE}" submitted successfully.`);
    expect(r.stdout).toContain(`Restore completed with status: Completed.`);

    const cm = JSON.parse((await kubectl(['get', 'configmap', 'settings', '-n', COPY, '-o', 'json'])).stdout) as { data: Record<string, string>; metadata: { labels: Record<string, string> } };
    expect(cm.data).toEqual({ colour: 'blue', size: 'large' });
    expect(cm.metadata.labels).toMatchObject({ app: 'shop', 'velero.io/backup-name': BACKUP, 'velero.io/restore-name': RESTORE });
    const secret = JSON.parse((await kubectl(['get', 'secret', 'token', '-n', COPY, '-o', 'json'])).stdout) as { data: Record<string, string> };
    expect(Buffer.from(secret.data.token ?? '', 'base64').toString()).toBe('not-a-real-secret');
    const svc = JSON.parse((await kubectl(['get', 'service', 'shop', '-n', COPY, '-o', 'json'])).stdout) as { spec: { ports: { port: number }[] } };
    expect(svc.spec.ports[0]?.port).toBe(80);
    await kubectl(['get', 'serviceaccount', 'shop', '-n', COPY]);
  });

  it('lists and describes the restore', async () => {
    const [table, d, logs] = await Promise.all([run(['restore', 'get']), run(['restore', 'describe', RESTORE, '--details']), run(['restore', 'logs', RESTORE])]);
    expect(table.exitCode, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+BACKUP\s+STATUS\s+STARTED\s+COMPLETED\s+ERRORS\s+WARNINGS\s+CREATED\s+SELECTOR$/);
    expect(table.stdout).toMatch(new RegExp(`\\n${RESTORE}\\s+${BACKUP}\\s+Completed\\s`));
    expect(d.exitCode, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/\nPhase:\s+Completed\n/);
    expect(d.stdout).toContain(`\nBackup:  ${BACKUP}\n`);
    expect(d.stdout).toContain(`\nNamespace mappings:  ${APP}=${COPY}\n`);
    expect(d.stdout).toContain('\nResource List:\n');
    expect(logs.exitCode, logs.stderr).toBe(0);
    expect(logs.stdout.length).toBeGreaterThan(0);
  });

  it('deletes the backup: its storage objects and the Backup object go', async () => {
    const noConfirm = await run(['backup', 'delete', BACKUP]);
    expect(noConfirm.exitCode).toBe(2);
    expect(noConfirm.stderr.trim()).toBe('error: --confirm: required when no terminal is attached');

    const r = await run(['backup', 'delete', BACKUP, '--confirm']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Request to delete backup "${BACKUP}" submitted successfully.`);
    await waitFor(async () => (await run(['backup', 'get', BACKUP])).exitCode === 4, { timeoutMs: 120_000, intervalMs: 1000, description: 'backup gone' });
    const info = clusterInfo();
    const listed = await s3Client().send(new ListObjectsV2Command({ Bucket: info.s3.bucket, Prefix: `${PREFIX}/backups/${BACKUP}/` }));
    expect(listed.Contents ?? []).toEqual([]);
  });
});
