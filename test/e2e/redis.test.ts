/**
 * A real database through file-system backup on real nodes: Redis (Debian's redis-server in the test bed's `redis:7.0`
 * image, append-only file on, data on a claim of the default StorageClass) loaded with 20,000 keys, a hash and a list,
 * and a second container that keeps incrementing a counter the whole time. It is backed up while it runs, with a
 * pre-backup hook from the pod's annotations that has Redis rewrite its append-only file and waits until the rewrite
 * is on disk (a compact, complete base file, fsynced: what the data mover then reads). The namespace is deleted and
 * restored; Redis starts on the restored volume and the database itself says the data is there: the same number of
 * keys, the same checksum of every value (computed by a Lua script inside Redis), the hash and the list, and a
 * counter no lower than it was when the backup started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, installCairn, kube as newKube } from '../integration/node-agent-support.js';
import { cairn, type CliResult, locationAvailable } from '../support/cli.js';
import { applyWithNamespace, clusterInfo, deleteNamespace, dropFinalizers, kubectl } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const RUN = Date.now().toString(36).slice(-5);
const NS = `cairn-redis-${RUN}`;
const APP = `redis-${RUN}`;
const KEYS = 20_000;

/** Rewrites the append-only file and waits until the rewrite is done (INFO lines end in \r\n). */
const PRE_HOOK = [
  'sh', '-c',
  'redis-cli BGREWRITEAOF >/dev/null && while redis-cli INFO persistence | grep -Eq "^aof_rewrite_(in_progress|scheduled):1"; do sleep 0.2; done',
];

/** A checksum of every loaded value, computed by Redis itself. */
const CHECKSUM = `local parts = {} for i = 1, ${KEYS} do parts[i] = redis.call('GET', 'key:' .. i) or '-' end return redis.sha1hex(table.concat(parts, ','))`;

function appObjects(): string {
  return `apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: redis-data, namespace: ${APP} }
spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: redis, namespace: ${APP} }
spec:
  replicas: 1
  strategy: { type: Recreate }
  selector: { matchLabels: { app: redis } }
  template:
    metadata:
      labels: { app: redis }
      annotations:
        backup.velero.io/backup-volumes: data
        pre.hook.backup.velero.io/container: redis
        pre.hook.backup.velero.io/command: '${JSON.stringify(PRE_HOOK)}'
        pre.hook.backup.velero.io/timeout: 2m
    spec:
      terminationGracePeriodSeconds: 5
      containers:
        - name: redis
          image: redis:7.0
          readinessProbe: { exec: { command: [redis-cli, PING] }, periodSeconds: 1 }
          volumeMounts: [{ name: data, mountPath: /data }]
        - name: writer
          image: redis:7.0
          # Keeps the database busy while it is backed up: one increment after another, as long as the pod runs.
          command: [sh, -c, "until redis-cli PING >/dev/null 2>&1; do sleep 0.2; done; while true; do redis-cli INCR live >/dev/null; sleep 0.05; done"]
      volumes: [{ name: data, persistentVolumeClaim: { claimName: redis-data } }]
`;
}

describe('Redis backed up while it runs, restored into a deleted namespace', () => {
  let kubeconfig: string;
  const run = (args: string[]): Promise<CliResult> => cairn([...args, '-n', NS], { kubeconfig, timeoutMs: 300_000 });

  async function redisPod(): Promise<string> {
    return waitFor(async () => {
      const r = await kubectl(['get', 'pods', '-n', APP, '-l', 'app=redis', '-o', 'json']);
      const pods = (JSON.parse(r.stdout) as { items: { metadata: { name: string; deletionTimestamp?: string }; status?: { conditions?: { type: string; status: string }[] } }[] }).items;
      return pods.find((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))?.metadata.name;
    }, { timeoutMs: 180_000, intervalMs: 1000, description: `a ready Redis pod in ${APP}` });
  }

  async function redis(...args: string[]): Promise<string> {
    const r = await kubectl(['exec', '-n', APP, await redisPod(), '-c', 'redis', '--', 'redis-cli', ...args]);
    return r.stdout.trim();
  }

  /** What the database says about its data. */
  async function facts(): Promise<{ keys: number; checksum: string; hash: string; list: string; live: number }> {
    return {
      keys: Number(await redis('DBSIZE')),
      checksum: await redis('EVAL', CHECKSUM, '0'),
      hash: await redis('HGETALL', 'profile'),
      list: await redis('LRANGE', 'events', '0', '-1'),
      live: Number(await redis('GET', 'live')),
    };
  }

  beforeAll(async () => {
    kubeconfig = clusterInfo().kubeconfigPath;
    await installCairn({ ns: NS, prefix: `e2e-redis-${RUN}` });
    await locationAvailable(run);
    await applyWithNamespace(APP, appObjects());
    const pod = await redisPod();
    // Loaded through Redis' own bulk protocol path (redis-cli --pipe), as a data import would.
    const load = `i=1; while [ $i -le ${KEYS} ]; do echo "SET key:$i value-$i-$RANDOM"; i=$((i+1)); done | redis-cli --pipe`;
    const loaded = await kubectl(['exec', '-n', APP, pod, '-c', 'redis', '--', 'sh', '-c', load], { timeoutMs: 300_000 });
    expect(loaded.stdout).toMatch(/errors: 0, replies: 20000/);
    await redis('HSET', 'profile', 'name', 'cairn', 'role', 'backup');
    await redis('RPUSH', 'events', 'created', 'loaded', 'backed-up');
  }, 600_000);

  afterAll(async () => {
    await dropFinalizers(NS);
    await cleanUp(newKube(), NS, [APP]);
  });

  it('backs up the running database with its pre hook, and the restored database holds the same data', async () => {
    const before = await facts();
    expect(before.keys).toBe(KEYS + 3);
    expect(before.live).toBeGreaterThan(0);

    const backup = await run(['backup', 'create', 'redis-1', '--include-namespaces', APP, '--wait']);
    expect(backup.exitCode, `${backup.stdout}\n${backup.stderr}`).toBe(0);
    expect(backup.stdout).toContain('Backup completed with status: Completed.');
    const b = JSON.parse((await kubectl(['get', 'backup', 'redis-1', '-n', NS, '-o', 'json'])).stdout) as { status?: { hookStatus?: object } };
    expect(b.status?.hookStatus).toEqual({ hooksAttempted: 1, hooksFailed: 0 });
    const logs = await run(['backup', 'logs', 'redis-1']);
    expect(logs.stdout).toContain('running exec hook');
    // The counter kept counting during the backup: the database ran the whole time.
    expect((await facts()).live).toBeGreaterThan(before.live);

    await deleteNamespace(APP, 180_000);
    const restore = await run(['restore', 'create', 'redis-1-restore', '--from-backup', 'redis-1', '--wait']);
    expect(restore.exitCode, `${restore.stdout}\n${restore.stderr}`).toBe(0);
    expect(restore.stdout).toContain('Restore completed with status: Completed.');

    const after = await facts();
    expect(after.keys).toBe(before.keys);
    expect(after.checksum).toBe(before.checksum);
    expect(after.hash).toBe(before.hash);
    expect(after.list).toBe(before.list);
    expect(after.live).toBeGreaterThanOrEqual(before.live);
    // Redis loaded what the hook had it write: its own log says so.
    const redisLog = await kubectl(['logs', '-n', APP, await redisPod(), '-c', 'redis']);
    expect(redisLog.stdout).toMatch(/DB loaded from (append only file|base file)/);
  }, 600_000);
});
