// The local cluster's control plane and S3 server behave like a real cluster's, as the rest of the suite
// assumes: API server, namespace lifecycle, workload controllers and scheduler, service-account tokens, MinIO.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { clusterInfo, kubectl, s3Client } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const suffix = randomBytes(3).toString('hex');
const created: string[] = [];

async function newNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${suffix}`;
  await kubectl(['create', 'namespace', name]);
  created.push(name);
  return name;
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse((await kubectl([...args, '-o', 'json'])).stdout) as T;
}

interface Item {
  metadata: { name: string; ownerReferences?: { kind: string; name: string }[] };
  spec?: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

afterAll(async () => {
  for (const ns of created) await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
});

describe('local cluster control plane', () => {
  it('serves the pinned Kubernetes version and reports ready', async () => {
    const version = await getJson<{ serverVersion: { gitVersion: string } }>(['version']);
    expect(version.serverVersion.gitVersion).toMatch(/^v1\.36\./);
    expect((await kubectl(['get', '--raw', '/readyz'])).stdout).toBe('ok');
  });

  it('creates a namespace and finalizes its deletion, contents included', async () => {
    const ns = await newNamespace('cp-ns');
    await kubectl(['create', 'configmap', 'settings', '-n', ns, '--from-literal=a=1']);
    await kubectl(['delete', 'namespace', ns, '--wait=false']);
    await waitFor(
      async () => (await kubectl(['get', 'namespace', ns], { allowFailure: true })).stderr.includes('NotFound'),
      { timeoutMs: 60_000, description: `namespace ${ns} deleted by the namespace controller` },
    );
  });

  it('publishes kube-root-ca.crt with the cluster CA into a new namespace', async () => {
    const ns = await newNamespace('cp-ca');
    const cm = await waitFor(
      async () => {
        const r = await kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', ns, '-o', 'json'], { allowFailure: true });
        return r.exitCode === 0 ? (JSON.parse(r.stdout) as { data: Record<string, string> }) : undefined;
      },
      { timeoutMs: 30_000, description: `configmap kube-root-ca.crt in ${ns}` },
    );
    const kubeconfig = parse(readFileSync(clusterInfo().kubeconfigPath, 'utf8')) as {
      clusters: { cluster: { 'certificate-authority-data': string } }[];
    };
    const ca = Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8');
    expect(cm.data['ca.crt']?.trim()).toBe(ca.trim());
  });

  it('issues a service-account token that the API server authenticates', async () => {
    const ns = await newNamespace('cp-sa');
    await waitFor(
      async () => (await kubectl(['get', 'serviceaccount', 'default', '-n', ns], { allowFailure: true })).exitCode === 0,
      { timeoutMs: 30_000, description: `serviceaccount default in ${ns}` },
    );
    const token = (await kubectl(['create', 'token', 'default', '-n', ns, '--duration=10m'])).stdout.trim();
    expect(token.split('.')).toHaveLength(3);
    const review = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    };
    const result = JSON.parse((await kubectl(['create', '-f', '-', '-o', 'json'], { input: JSON.stringify(review) })).stdout) as {
      status: { authenticated?: boolean; user?: { username?: string } };
    };
    expect(result.status.authenticated).toBe(true);
    expect(result.status.user?.username).toBe(`system:serviceaccount:${ns}:default`);
  });

  it('turns a Deployment into a ReplicaSet and Pods, schedules them on the nodes, and collects them on delete', async () => {
    const ns = await newNamespace('cp-deploy');
    await kubectl(['create', 'deployment', 'web', '-n', ns, '--image=busybox', '--replicas=2', '--', 'sleep', '3600']);
    const rs = await waitFor(
      async () => (await getJson<{ items: Item[] }>(['get', 'replicasets', '-n', ns, '-l', 'app=web'])).items[0],
      { timeoutMs: 30_000, description: `ReplicaSet of deployment web in ${ns}` },
    );
    expect(rs.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', name: 'web' });
    const nodes = clusterInfo().nodes.map((n) => n.name);
    const pods = await waitFor(
      async () => {
        const list = (await getJson<{ items: Item[] }>(['get', 'pods', '-n', ns, '-l', 'app=web'])).items;
        if (list.length !== 2) return undefined;
        // With nodes, the scheduler must bind every pod to one of them; without, they exist and stay Pending.
        if (nodes.length > 0 && !list.every((p) => p.spec?.nodeName)) return undefined;
        return list;
      },
      { timeoutMs: 60_000, description: `2 pods of deployment web in ${ns}${nodes.length > 0 ? ' bound to nodes' : ''}` },
    );
    for (const p of pods) {
      expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: rs.metadata.name });
      if (nodes.length > 0) expect(nodes).toContain(p.spec?.nodeName);
      else expect(p.status?.phase).toBe('Pending');
    }

    await kubectl(['delete', 'deployment', 'web', '-n', ns, '--wait=false']);
    await waitFor(
      async () => (await getJson<{ items: Item[] }>(['get', 'replicasets', '-n', ns])).items.length === 0,
      { timeoutMs: 60_000, description: `garbage collector deleting the ReplicaSet of web in ${ns}` },
    );
  });

  it('registers every node Ready and reaches its kubelet through the API server (pod logs)', async () => {
    const { nodes } = clusterInfo();
    expect(nodes.length).toBeGreaterThan(0);
    const ready = await getJson<{ items: Item[] }>(['get', 'nodes']);
    for (const n of nodes) {
      const node = ready.items.find((i) => i.metadata.name === n.name);
      expect(node?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    const ns = await newNamespace('cp-logs');
    await kubectl(['run', 'talker', '-n', ns, '--image=busybox', '--restart=Never', '--', 'sh', '-c', `echo hello-${suffix}; sleep 3600`]);
    // `kubectl logs` goes API server -> kubelet over TLS with the API server's kubelet client certificate.
    await waitFor(
      async () => (await kubectl(['logs', 'talker', '-n', ns], { allowFailure: true })).stdout.includes(`hello-${suffix}`),
      { timeoutMs: 60_000, description: `logs of pod talker in ${ns}` },
    );
  });

  it('stores and returns an object in the MinIO test bucket', async () => {
    const { s3 } = clusterInfo();
    const client = s3Client();
    const key = `control-plane-test/${suffix}.txt`;
    const body = `hello from ${suffix}`;
    try {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
      const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
      expect(await got.Body?.transformToString()).toBe(body);
      await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    } finally {
      client.destroy();
    }
  });
});
