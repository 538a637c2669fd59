/**
 * `cairn debug` on real nodes after a file-system backup: the bundle opens, holds the server's and node agents' logs,
 * the velero.io objects, the workloads, the versions, the backup's `describe --details` and its log read from
 * storage; and no secret value is anywhere in it (the credentials Secret's keys, the repository password).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyWithNamespace, clusterInfo, kubectl, namespacesGone } from '../support/cluster.js';
import { cairn, type CliResult, locationAvailable } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { readTarGz } from '../unit/server/backup/tar.js';

const NS = 'cairn-e2e-debug';
const APP = 'e2e-debug-app';
const BACKUP = 'debug-1';

const appObjects = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ${APP}
  annotations: { backup.velero.io/backup-volumes: scratch }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      command: [sh, -c, "echo debug-bundle-data > /scratch/file && exec sleep 100000"]
      volumeMounts: [{ name: scratch, mountPath: /scratch }]
  volumes: [{ name: scratch, emptyDir: {} }]
`;

describe('cairn debug on real nodes', () => {
  let kubeconfig: string;
  let dir: string;
  const run = (args: string[]): Promise<CliResult> => cairn([...args, '-n', NS], { kubeconfig });

  beforeAll(async () => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    dir = mkdtempSync(join(tmpdir(), 'cairn-e2e-debug-'));
    const creds = join(dir, 'credentials');
    writeFileSync(creds, `[default]\naws_access_key_id = ${info.s3.accessKeyId}\naws_secret_access_key = ${info.s3.secretAccessKey}\n`);
    await namespacesGone([NS, APP]);
    const install = await cairn(
      [
        'install', '-n', NS, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', `e2e-debug-${Date.now()}`, '--secret-file', creds,
        '--backup-location-config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`,
        '--use-node-agent', '--image', info.image, '--kubelet-root-dir', info.kubeletRootDir, '--wait', '--timeout', '4m',
      ],
      { kubeconfig },
    );
    expect(install.exitCode, install.stderr).toBe(0);
    await locationAvailable(run);
    await applyWithNamespace(APP, appObjects);
    await waitFor(async () => (await kubectl(['get', 'pod', 'web', '-n', APP, '-o', 'jsonpath={.status.phase}'])).stdout === 'Running', {
      timeoutMs: 120_000,
      intervalMs: 1000,
      description: 'pod web Running',
    });
    const backup = await run(['backup', 'create', BACKUP, '--include-namespaces', APP, '--wait']);
    expect(backup.exitCode, `${backup.stdout}\n${backup.stderr}`).toBe(0);
  }, 480_000);

  afterAll(async () => {
    await kubectl(['delete', 'namespace', APP, NS, '--ignore-not-found', '--wait=false'], { allowFailure: true });
  });

  /** Every secret value the install holds, read as cluster admin (the bundle must hold none of them). */
  async function secretValues(): Promise<string[]> {
    const values: string[] = [];
    for (const name of ['cloud-credentials', 'velero-repo-credentials']) {
      const secret = JSON.parse((await kubectl(['get', 'secret', name, '-n', NS, '-o', 'json'])).stdout) as { data?: Record<string, string> };
      for (const b64 of Object.values(secret.data ?? {})) {
        const value = Buffer.from(b64, 'base64').toString('utf8');
        values.push(b64, value);
        // The credentials file's lines (`aws_secret_access_key = …`): each value on its own too.
        for (const m of value.matchAll(/=\s*(\S+)/g)) values.push(m[1]!);
      }
    }
    const info = clusterInfo();
    values.push(info.s3.accessKeyId, info.s3.secretAccessKey);
    return values.filter((v) => v.length >= 6);
  }

  it('writes one tar.gz with the logs, objects, versions and the backup; no secret value is in it', async () => {
    const file = join(dir, 'bundle.tar.gz');
    const r = await run(['debug', '--backup', BACKUP, '--output', file]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout.trim()).toBe(`Generated debug information bundle: ${file}`);
    // Not a terminal: no progress lines.
    expect(r.stderr).not.toMatch(/Collecting/);

    const entries = await readTarGz(file);
    const names = entries.map((e) => e.name);
    const body = (name: string) => entries.find((e) => e.name === `cairn-bundle/${name}`)?.body ?? '';
    expect(names.every((n) => n.startsWith('cairn-bundle/')), names.join('\n')).toBe(true);
    for (const expected of [
      'version.txt',
      'client-config.json',
      'collection.txt',
      `resources/backups/${BACKUP}.yaml`,
      'resources/backupstoragelocations/default.yaml',
      'workloads/deployment-cairn.yaml',
      'workloads/daemonset-node-agent.yaml',
      `backup_describe_${BACKUP}.txt`,
      `backup_${BACKUP}.log`,
    ]) {
      expect(names, expected).toContain(`cairn-bundle/${expected}`);
    }
    expect(names.some((n) => /^cairn-bundle\/resources\/podvolumebackups\/.+\.yaml$/.test(n)), 'a PodVolumeBackup').toBe(true);
    expect(names.some((n) => /^cairn-bundle\/resources\/backuprepositories\/.+\.yaml$/.test(n)), 'a BackupRepository').toBe(true);
    expect(names.some((n) => /^cairn-bundle\/logs\/server\/cairn-[^/]+\/cairn\.log$/.test(n)), 'the server log').toBe(true);
    const agentLogs = names.filter((n) => /^cairn-bundle\/logs\/node-agent\/node-agent-[^/]+\/node-agent\.log$/.test(n));
    expect(agentLogs.length, 'a node-agent log per node').toBe(clusterInfo().nodes.length);
    expect(names.some((n) => n.includes('/secrets/') || /secret/i.test(n.split('/').pop() ?? '')), 'no Secret file').toBe(false);

    expect(body('version.txt')).toMatch(/^Client:\n\tVersion: .+\n\tNode\.js: .+\nServer:\n\tVersion: .+\nKubernetes:\n\tVersion: v1\.\d+/);
    expect(body(`backup_describe_${BACKUP}.txt`)).toMatch(new RegExp(`^Name:\\s+${BACKUP}$`, 'm'));
    expect(body(`backup_describe_${BACKUP}.txt`)).toMatch(/^Phase:\s+Completed/m);
    expect(body(`backup_describe_${BACKUP}.txt`)).toMatch(/Resource List:/);
    expect(body(`backup_${BACKUP}.log`)).toContain(BACKUP);
    expect(body(`resources/backups/${BACKUP}.yaml`)).toMatch(/phase: Completed/);
    // A data-mover pod deleted between the listing and the read of its log is the one thing allowed to be missing.
    const problems = body('collection.txt').split('Could not collect:\n')[1]?.split('\n').filter(Boolean) ?? [];
    expect(problems.filter((p) => !/^ {2}log of \S+: .*not found/i.test(p))).toEqual([]);

    const secrets = await secretValues();
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    for (const e of entries) {
      for (const s of secrets) expect(e.body.includes(s), `${e.name} holds a secret value`).toBe(false);
    }
  }, 240_000);
});
