import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, beforeAll } from 'vitest';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { AuthorizationV1Api, type KubernetesObject, type V1ClusterRole } from '@kubernetes/client-node';
import { restoreRulesFor } from '../../src/api/restore-scope.js';
import { ACCESS_CHECKS, EXAMPLE_NARROW_SCOPE, describeCheck, type AccessCheck } from '../../src/install/rbac-model.js';
import { kubeFromConfig } from '../../src/kube/client.js';
import { apiReader } from '../../src/server/backup/api-reader.js';
import { servedResources } from '../../src/server/rbac/restore-role.js';
import { clusterInfo, kubeConfig, kubectl, s3Client } from '../support/cluster.js';
import { cairn } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const NS = 'cairn-install-test';

interface PodList {
  items: { metadata: { name: string; labels?: Record<string, string> }; spec: { nodeName?: string }; status: { phase?: string; containerStatuses?: { restartCount?: number }[] } }[];
}

async function pods(selector: string): Promise<PodList['items']> {
  const r = await kubectl(['-n', NS, 'get', 'pods', '-l', selector, '-o', 'json']);
  return (JSON.parse(r.stdout) as PodList).items;
}

/** docs/rbac.md's access matrix: per row (as describeCheck prints it), the answers of its three columns. */
function docMatrix(): Map<string, { server: boolean; narrow: boolean; agent: boolean }> {
  const doc = readFileSync(new URL('../../docs/rbac.md', import.meta.url), 'utf8');
  const block = doc.slice(doc.indexOf('<!-- generated:access-matrix -->'), doc.indexOf('<!-- end:access-matrix -->'));
  const out = new Map<string, { server: boolean; narrow: boolean; agent: boolean }>();
  for (const line of block.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const m = /^`(.+)`$/.exec(cells[1] ?? '');
    if (m) out.set(m[1]!, { server: cells[3] === 'yes', narrow: cells[4] === 'yes', agent: cells[5] === 'yes' });
  }
  return out;
}

/** What `kubectl auth can-i --as=system:serviceaccount:<ns>:<sa>` asks: a SubjectAccessReview with the account's groups. */
async function canI(ns: string, sa: string, c: AccessCheck): Promise<boolean> {
  const namespace = c.namespace === 'install' ? ns : c.namespace === 'other' ? 'default' : undefined;
  const review = await kubeConfig().makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${ns}:${sa}`,
        // As a real token of the account carries them, so grants to every service account would show too.
        groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
        resourceAttributes: {
          verb: c.verb,
          group: c.group,
          resource: c.resource,
          ...(c.subresource ? { subresource: c.subresource } : {}),
          ...(namespace ? { namespace } : {}),
          ...(c.name ? { name: c.name } : {}),
        },
      },
    },
  });
  return review.status?.allowed === true;
}

describe('install against the local cluster', () => {
  let kubeconfig: string;
  let installArgs: string[];

  beforeAll(() => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    const dir = mkdtempSync(join(tmpdir(), 'cairn-install-it-'));
    const creds = join(dir, 'credentials');
    writeFileSync(creds, `[default]\naws_access_key_id = ${info.s3.accessKeyId}\naws_secret_access_key = ${info.s3.secretAccessKey}\n`);
    installArgs = [
      'install', '-n', NS, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', 'install-test',
      '--secret-file', creds,
      '--backup-location-config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`,
      '--use-node-agent', '--image', 'ghcr.io/cairn-backup/cairn:dev',
    ];
  });

  it('rejects bad input before creating anything', async () => {
    const r = await cairn(['install', '-n', NS, '--provider', 'gcp', '--bucket', 'b'], { kubeconfig });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toBe('error: --provider: "gcp" is not built in (built in: aws, filesystem); install the plugin that provides it with --plugins IMAGE');
    const ns = await kubectl(['get', 'namespace', NS], { allowFailure: true });
    expect(ns.exitCode).not.toBe(0);
  });

  it('installs CRDs, server and node agent, and they run', async () => {
    const r = await cairn([...installArgs, '--wait', '--timeout', '4m'], { kubeconfig });
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.exitCode, r.stderr).toBe(0);
    // Other test files on the same cluster may have applied the CRDs already.
    expect(r.stdout).toMatch(/^CustomResourceDefinition\/backups\.velero\.io: (created|unchanged|configured)$/m);
    expect(r.stdout).toContain(`Namespace/${NS}: created`);
    expect(r.stdout).toContain(`Deployment/${NS}/cairn: created`);
    expect(r.stdout).toContain('cairn is ready');

    const crds = await kubectl(['get', 'crd', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}']);
    const established = crds.stdout.split('\n').filter((l) => l.endsWith('.velero.io=True'));
    expect(established).toHaveLength(13);

    const server = await pods('deploy=cairn');
    expect(server.map((p) => p.status.phase)).toEqual(['Running']);
    const agents = await pods('name=node-agent');
    expect(agents.map((p) => p.status.phase)).toEqual(['Running', 'Running']);
    expect(new Set(agents.map((p) => p.spec.nodeName)).size).toBe(clusterInfo().nodes.length);
    // Started while the API server may still answer 503 for the CRDs just created, they wait that out: no restart.
    expect([...server, ...agents].map((p) => p.status.containerStatuses?.[0]?.restartCount)).toEqual([0, 0, 0]);

    // The in-cluster server answers through its own in-cluster configuration.
    const v = await cairn(['version', '-n', NS, '-o', 'json', '--timeout', '30s'], { kubeconfig });
    expect(JSON.parse(v.stdout)).toMatchObject({ server: { version: expect.stringMatching(/^\d+\.\d+\.\d+/) } });

    const loc = await cairn(['backup-location', 'get', '-n', NS, '-o', 'json'], { kubeconfig });
    expect(JSON.parse(loc.stdout).items[0]).toMatchObject({ metadata: { name: 'default' }, spec: { provider: 'aws', default: true } });
  });

  it('the server fills its restore ClusterRole with exactly what the API server serves, no sub-resource but status', async () => {
    const k = kubeFromConfig(kubeConfig());
    const role = await waitFor(
      async () => {
        const r: V1ClusterRole = await k.rbac.readClusterRole({ name: `cairn-restore-${NS}` });
        return (r.rules ?? []).length > 0 ? r : undefined;
      },
      { timeoutMs: 120_000, description: 'the restore ClusterRole filled in by the server' },
    );
    expect(role.rules).toEqual(restoreRulesFor(await servedResources(apiReader(k))));
    const subresources = (role.rules ?? []).flatMap((r) => r.resources ?? []).filter((r) => r.includes('/') && !r.endsWith('/status'));
    expect(subresources).toEqual([]);
  });

  it('changes nothing when run again', async () => {
    const r = await cairn(installArgs, { kubeconfig });
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => /: (created|configured|unchanged)$/.test(l));
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.filter((l) => !l.endsWith(': unchanged'))).toEqual([]);
  });

  it('the API server answers every question of docs/rbac.md\'s access matrix as the doc does, for every account', async () => {
    // A narrow install's RBAC objects, exactly as install makes them (its pods are not needed to ask the API server).
    const narrowNs = 'cairn-install-narrow';
    try {
      const dry = await cairn(['install', '-n', narrowNs, '--restore-resources', EXAMPLE_NARROW_SCOPE.join(','), '--dry-run', '-o', 'json'], { kubeconfig });
      expect(dry.exitCode, dry.stderr).toBe(0);
      const rbacKinds = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
      const items = (JSON.parse(dry.stdout) as { items: KubernetesObject[] }).items.filter((o) => rbacKinds.has(o.kind ?? ''));
      await kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });

      const doc = docMatrix();
      expect(doc.size).toBe(ACCESS_CHECKS.length);
      const mismatches: string[] = [];
      for (const c of ACCESS_CHECKS) {
        const row = doc.get(describeCheck(c));
        expect(row, describeCheck(c)).toBeDefined();
        const got = { server: await canI(NS, 'cairn', c), narrow: await canI(narrowNs, 'cairn', c), agent: await canI(NS, 'cairn-node-agent', c) };
        for (const col of ['server', 'narrow', 'agent'] as const) {
          if (got[col] !== row![col]) mismatches.push(`${describeCheck(c)} as ${col}: the API server says ${got[col] ? 'yes' : 'no'}, the doc ${row![col] ? 'yes' : 'no'}`);
        }
      }
      expect(mismatches).toEqual([]);
    } finally {
      await kubectl(['delete', 'namespace', narrowNs, '--wait=false'], { allowFailure: true });
      await kubectl(['delete', 'clusterrole,clusterrolebinding', `cairn-server-${narrowNs}`, `cairn-restore-${narrowNs}`], { allowFailure: true });
    }
  });

  it('install --dry-run -o yaml applies with kubectl, credentials left out unless --include-secrets', async () => {
    const ns = 'cairn-install-dryrun';
    const args = installArgs.map((a) => (a === NS ? ns : a));
    try {
      const dry = await cairn([...args, '--dry-run', '-o', 'yaml'], { kubeconfig });
      expect(dry.exitCode, dry.stderr).toBe(0);
      expect(dry.stdout).not.toContain('kind: Secret');
      expect(dry.stderr).toContain(`note: Secret ${ns}/cloud-credentials is left out of the output`);
      const applied = await kubectl(['apply', '-f', '-'], { input: dry.stdout });
      expect(applied.stdout).toContain('deployment.apps/cairn');
      const withSecret = await cairn([...args, '--dry-run', '-o', 'yaml', '--include-secrets'], { kubeconfig });
      expect(withSecret.stdout).toContain('kind: Secret');
      await kubectl(['apply', '-f', '-'], { input: withSecret.stdout });
      const secret = await kubectl(['-n', ns, 'get', 'secret', 'cloud-credentials', '-o', 'jsonpath={.data.cloud}']);
      expect(Buffer.from(secret.stdout, 'base64').toString()).toContain('aws_access_key_id');
    } finally {
      await kubectl(['delete', 'namespace', ns, '--wait=false'], { allowFailure: true });
      await kubectl(['delete', 'clusterrole,clusterrolebinding', `cairn-server-${ns}`, `cairn-node-agent-${ns}`, `cairn-restore-${ns}`], { allowFailure: true });
    }
  });

  it('install --wait with an image that cannot be pulled reports the pull failure and exits non-zero', async () => {
    const ns = 'cairn-install-badimage';
    try {
      const r = await cairn(['install', '-n', ns, '--provider', 'filesystem', '--bucket', 'b', '--image', 'registry.invalid/nothing-here:nope', '--wait', '--timeout', '3m'], { kubeconfig });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toMatch(/cairn cannot become ready: pod cairn-\S+ container cairn: ImagePullBackOff \(image "registry\.invalid\/nothing-here:nope"\)/);
    } finally {
      await kubectl(['delete', 'namespace', ns, '--wait=false'], { allowFailure: true });
      await kubectl(['delete', 'clusterrole,clusterrolebinding', `cairn-server-${ns}`, `cairn-restore-${ns}`], { allowFailure: true });
    }
  });

  it('uninstalls everything but leaves storage alone', async () => {
    const s3 = s3Client();
    const key = 'install-test/backups/kept/velero-backup.json';
    await s3.send(new PutObjectCommand({ Bucket: clusterInfo().s3.bucket, Key: key, Body: '{}' }));
    const r = await cairn(['uninstall', '-n', NS, '--force', '--wait', '--timeout', '3m'], { kubeconfig });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Namespace ${NS}: deleted`);
    await waitFor(async () => (await kubectl(['get', 'namespace', NS], { allowFailure: true })).exitCode !== 0, {
      timeoutMs: 60_000,
      description: `namespace ${NS} gone`,
    });
    // Custom resources left by other tests on this cluster are deleted with their CRDs; that may take a moment.
    await waitFor(async () => !(await kubectl(['get', 'crd', '-o', 'name'])).stdout.includes('velero.io'), {
      timeoutMs: 60_000,
      description: 'velero.io CRDs gone',
    });
    const kept = await s3.send(new GetObjectCommand({ Bucket: clusterInfo().s3.bucket, Key: key }));
    expect(await kept.Body?.transformToString()).toBe('{}');
  });
});
