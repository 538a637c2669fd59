/**
 * fs-backup as cluster operators meet it, through the CLI on the local cluster: a Deployment opted in with
 * `backup.velero.io/backup-volumes`, a StatefulSet backed up in the opt-out mode with one volume excluded, two pods
 * sharing one claim, a pod naming a volume it does not have, a pod that is not scheduled; backup, delete the
 * namespaces, restore (the restored pods are adopted by their restored owners, not replaced); a restore with
 * namespace mappings next to the still-present source; deleting a backup leaves an earlier one restorable; a
 * canceled pod volume backup, an empty volume and a crash-looping pod.
 * One install for the whole file; data is written and read on the nodes' host paths.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepositoryForVolume } from '../../src/storage/volume-repository.js';
import type { Kube } from '../../src/kube/client.js';
import { cleanUp, installCairn, kube as newKube, volumeDirOnNode } from '../integration/node-agent-support.js';
import { cairn, type CliResult, locationAvailable } from '../support/cli.js';
import { clusterInfo, dropFinalizers, kubectl } from '../support/cluster.js';
import { claimDataPath } from '../support/node-paths.js';
import { waitFor } from '../support/wait.js';

const RUN = Date.now().toString(36).slice(-5);
const NS = `cairn-g-${RUN}`;
const WEB = `g-web-${RUN}`;
const WEB_MAPPED = `g-web2-${RUN}`;
const DB = `g-db-${RUN}`;
const SHARED = `g-shared-${RUN}`;
const VICTIM = `g-victim-${RUN}`;

interface PodJson {
  metadata: { name: string; uid: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
  spec: { nodeName?: string; initContainers?: { name: string }[]; volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[] };
  status?: { phase?: string };
}

interface PvbJson {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { pod: { name: string; namespace: string }; volume: string };
  status?: { phase?: string; snapshotID?: string; message?: string };
}

interface PvrJson {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { pod: { name: string; namespace: string }; volume: string; sourceNamespace: string };
  status?: { phase?: string };
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse((await kubectl([...args, '-o', 'json'])).stdout) as T;
}

async function podsOf(ns: string): Promise<PodJson[]> {
  return (await getJson<{ items: PodJson[] }>(['get', 'pods', '-n', ns])).items;
}

const podsYaml = {
  web: (ns: string) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ${ns} }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web }
      annotations: { backup.velero.io/backup-volumes: content }
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: app
          image: busybox
          command: [sh, -c, "exec sleep 100000"]
          volumeMounts: [{ name: content, mountPath: /g-web/content }, { name: tmp, mountPath: /g-web/tmp }]
      volumes: [{ name: content, emptyDir: {} }, { name: tmp, emptyDir: {} }]
---
apiVersion: v1
kind: Pod
metadata:
  name: typo
  namespace: ${ns}
  annotations: { backup.velero.io/backup-volumes: "contnet" }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - { name: app, image: busybox, command: [sh, -c, "exec sleep 100000"], volumeMounts: [{ name: content, mountPath: /g-typo }] }
  volumes: [{ name: content, emptyDir: {} }]
---
apiVersion: v1
kind: Pod
metadata:
  name: unscheduled
  namespace: ${ns}
  annotations: { backup.velero.io/backup-volumes: content }
spec:
  nodeSelector: { kubernetes.io/hostname: no-such-node }
  terminationGracePeriodSeconds: 1
  containers:
    - { name: app, image: busybox, command: [sh, -c, "exec sleep 100000"], volumeMounts: [{ name: content, mountPath: /g-unscheduled }] }
  volumes: [{ name: content, emptyDir: {} }]
`,
  db: (ns: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db, namespace: ${ns} }
spec:
  replicas: 2
  serviceName: db
  selector: { matchLabels: { app: db } }
  template:
    metadata:
      labels: { app: db }
      annotations: { backup.velero.io/backup-volumes-excludes: cache }
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: app
          image: busybox
          command: [sh, -c, "exec sleep 100000"]
          volumeMounts: [{ name: data, mountPath: /g-db/data }, { name: cache, mountPath: /g-db/cache }]
      volumes: [{ name: cache, emptyDir: {} }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
`,
  shared: (ns: string, node: string) =>
    [`apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: shared, namespace: ${ns} }
spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }`]
      .concat(
        ['reader-a', 'reader-b'].map(
          (name) => `apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: ${ns}, labels: { app: shared } }
spec:
  nodeSelector: { kubernetes.io/hostname: ${node} }
  terminationGracePeriodSeconds: 1
  containers:
    - { name: app, image: busybox, command: [sh, -c, "exec sleep 100000"], volumeMounts: [{ name: shared, mountPath: /g-shared/${name} }] }
  volumes: [{ name: shared, persistentVolumeClaim: { claimName: shared } }]`,
        ),
      )
      .join('\n---\n'),
  victim: (ns: string) => `apiVersion: v1
kind: Pod
metadata:
  name: victim
  namespace: ${ns}
  annotations: { backup.velero.io/backup-volumes: "keep,lost" }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      command: [sh, -c, "exec sleep 100000"]
      volumeMounts: [{ name: keep, mountPath: /g-victim/keep }, { name: lost, mountPath: /g-victim/lost }]
  volumes: [{ name: keep, emptyDir: {} }, { name: lost, emptyDir: {} }]
---
apiVersion: v1
kind: Pod
metadata:
  name: crashy
  namespace: ${ns}
  annotations: { backup.velero.io/backup-volumes: "logs,empty" }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      command: [sh, -c, "sleep 3; exit 1"]
      volumeMounts: [{ name: logs, mountPath: /g-crashy/logs }, { name: empty, mountPath: /g-crashy/empty }]
  volumes: [{ name: logs, emptyDir: {} }, { name: empty, emptyDir: {} }]
`,
};

describe('fs-backup with workloads as operators run them', () => {
  let k: Kube;
  let kubeconfig: string;
  const run = (args: string[]): Promise<CliResult> => cairn([...args, '-n', NS], { kubeconfig, timeoutMs: 300_000 });
  /** What was written per `<namespace>/<pod>/<volume>`: file name → content. */
  const written = new Map<string, Record<string, string>>();

  async function pod(ns: string, name: string): Promise<V1Pod> {
    return k.core.readNamespacedPod({ namespace: ns, name });
  }

  async function dirOf(ns: string, name: string, volume: string): Promise<string> {
    return volumeDirOnNode(k, await pod(ns, name), volume);
  }

  /** The files of a volume (the restore's `.velero` marker left out), name → content. */
  async function filesOf(ns: string, name: string, volume: string): Promise<Record<string, string>> {
    const dir = await dirOf(ns, name, volume);
    if (!existsSync(dir)) return {};
    return Object.fromEntries(readdirSync(dir).filter((f) => f !== '.velero').sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
  }

  async function write(ns: string, name: string, volume: string, files: Record<string, string>): Promise<void> {
    const dir = await dirOf(ns, name, volume);
    mkdirSync(dir, { recursive: true });
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
    written.set(`${ns}/${name}/${volume}`, { ...(written.get(`${ns}/${name}/${volume}`) ?? {}), ...files });
  }

  async function running(ns: string, want: number): Promise<PodJson[] | undefined> {
    const pods = (await podsOf(ns)).filter((p) => p.metadata.name !== 'unscheduled');
    return pods.length === want && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
  }

  async function pvbsOf(backup: string): Promise<PvbJson[]> {
    return (await getJson<{ items: PvbJson[] }>(['get', 'podvolumebackups', '-n', NS, '-l', `velero.io/backup-name=${backup}`])).items;
  }

  async function pvrsOf(restore: string): Promise<PvrJson[]> {
    return (await getJson<{ items: PvrJson[] }>(['get', 'podvolumerestores', '-n', NS, '-l', `velero.io/restore-name=${restore}`])).items;
  }

  const summary = (items: { spec: { pod: { name: string; namespace: string }; volume: string }; status?: { phase?: string } }[]) =>
    items.map((p) => `${p.spec.pod.namespace}/${p.spec.pod.name}/${p.spec.volume}:${p.status?.phase ?? ''}`).sort();

  async function deleteNamespaces(...names: string[]): Promise<void> {
    await kubectl(['delete', 'namespace', ...names, '--wait=false']);
    await waitFor(async () => (await kubectl(['get', 'namespace', ...names, '-o', 'name', '--ignore-not-found'], { allowFailure: true })).stdout.trim() === '', {
      timeoutMs: 180_000,
      intervalMs: 1000,
      description: `namespaces ${names.join(', ')} deleted`,
    });
  }

  beforeAll(async () => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    k = newKube();
    // The test reads the repository's snapshots itself, with the location's keys.
    process.env.AWS_ACCESS_KEY_ID = info.s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = info.s3.secretAccessKey;
    await installCairn({ ns: NS, prefix: `g-workloads-${RUN}` });
    await locationAvailable(run);
    for (const ns of [WEB, DB, SHARED, VICTIM]) await kubectl(['create', 'namespace', ns]);
    await kubectl(['apply', '-f', '-'], { input: [podsYaml.web(WEB), podsYaml.db(DB), podsYaml.shared(SHARED, info.nodes[0]?.name ?? ''), podsYaml.victim(VICTIM)].join('\n---\n') });
    const webPods = await waitFor(() => running(WEB, 3), { timeoutMs: 180_000, intervalMs: 1000, description: 'web pods Running' });
    await waitFor(() => running(DB, 2), { timeoutMs: 180_000, intervalMs: 1000, description: 'db pods Running' });
    await waitFor(() => running(SHARED, 2), { timeoutMs: 180_000, intervalMs: 1000, description: 'shared pods Running' });
    await waitFor(() => running(VICTIM, 2), { timeoutMs: 180_000, intervalMs: 1000, description: 'victim and crashy pods Running' });
    await write(VICTIM, 'victim', 'keep', { 'kept.txt': 'comes back\n' });
    await write(VICTIM, 'crashy', 'logs', { 'last-words.txt': 'written before each crash\n' });
    await write(VICTIM, 'victim', 'lost', { 'big.bin': randomBytes(16 * 1024 * 1024).toString('base64') });
    for (const p of webPods.filter((x) => x.metadata.labels?.app === 'web')) {
      await write(WEB, p.metadata.name, 'content', { 'owner.txt': `${p.metadata.name}\n`, 'blob.bin': randomBytes(256 * 1024).toString('base64') });
      await write(WEB, p.metadata.name, 'tmp', { 'not-asked-for.txt': 'only the annotated volume is backed up\n' });
    }
    for (const name of ['db-0', 'db-1']) {
      await write(DB, name, 'data', { 'rows.txt': `rows of ${name}\n` });
      await write(DB, name, 'cache', { 'cache.txt': 'excluded from the backup\n' });
    }
    await write(SHARED, 'reader-a', 'shared', { 'shared.txt': 'one claim, two pods\n' });
  }, 600_000);

  afterAll(async () => {
    await dropFinalizers(NS);
    if (k) await cleanUp(k, NS, [WEB, WEB_MAPPED, DB, SHARED, VICTIM]);
  });

  it('opt-in: backs up the annotated volume of each Deployment pod; a misnamed volume and an unscheduled pod are warnings', async () => {
    const r = await run(['backup', 'create', 'web-1', '--include-namespaces', WEB, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    // Velero logs both at warning level; the backup completes (with warnings).
    expect(r.stdout).toContain('Backup completed with status: Completed.');
    const webPods = (await podsOf(WEB)).filter((p) => p.metadata.labels?.app === 'web').map((p) => p.metadata.name);
    expect(summary(await pvbsOf('web-1'))).toEqual(webPods.map((p) => `${WEB}/${p}/content:Completed`).sort());

    const d = await run(['backup', 'describe', 'web-1', '--details']);
    expect(d.exitCode, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/^Warnings:/m);
    const logs = await run(['backup', 'logs', 'web-1']);
    expect(logs.stdout).toContain(`No volume named contnet found in pod ${WEB}/typo, skipping`);
    expect(logs.stdout).toContain(`pod is not scheduled, name=${WEB}/unscheduled`);
  }, 300_000);

  it('opt-out: backs up every StatefulSet claim but the excluded volume, and a claim shared by two pods once', async () => {
    const r = await run(['backup', 'create', 'db-1', '--include-namespaces', `${DB},${SHARED}`, '--default-volumes-to-fs-backup', '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Backup completed with status: Completed.');
    expect(summary(await pvbsOf('db-1'))).toEqual([`${DB}/db-0/data:Completed`, `${DB}/db-1/data:Completed`, `${SHARED}/reader-a/shared:Completed`]);
    const logs = await run(['backup', 'logs', 'db-1']);
    expect(logs.stdout).toContain('Pod volume uses a persistent volume claim which has already been backed up from another pod, skipping.');
    expect(logs.stdout).toContain(`backed up from pod ${SHARED}/reader-a`);
  }, 300_000);

  it('restores the StatefulSet and the shared claim into deleted namespaces: the restored pods are adopted, not replaced, and hold the data', async () => {
    await deleteNamespaces(DB, SHARED);
    const r = await run(['restore', 'create', 'db-1-restore', '--from-backup', 'db-1', '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('Restore completed with status: Completed.');
    const pvrs = await pvrsOf('db-1-restore');
    expect(summary(pvrs)).toEqual([`${DB}/db-0/data:Completed`, `${DB}/db-1/data:Completed`, `${SHARED}/reader-a/shared:Completed`]);

    const dbPods = await waitFor(() => running(DB, 2), { timeoutMs: 180_000, intervalMs: 1000, description: 'restored db pods Running' });
    // The pods the data went into are the ones running: the StatefulSet adopted them instead of making new ones.
    for (const p of dbPods) {
      const pvr = pvrs.find((x) => x.spec.pod.name === p.metadata.name && x.spec.pod.namespace === DB);
      expect(pvr?.metadata.labels?.['velero.io/pod-uid'], p.metadata.name).toBe(p.metadata.uid);
      expect(p.spec.initContainers?.map((c) => c.name)).toContain('restore-wait');
    }
    await waitFor(
      async () => (await podsOf(DB)).every((p) => p.metadata.ownerReferences?.some((o) => o.kind === 'StatefulSet' && o.name === 'db' && o.controller)),
      { timeoutMs: 60_000, intervalMs: 1000, description: 'db pods owned by StatefulSet db' },
    );
    for (const name of ['db-0', 'db-1']) {
      expect(await filesOf(DB, name, 'data'), `${name}/data`).toEqual(written.get(`${DB}/${name}/data`));
      expect(await filesOf(DB, name, 'cache'), `${name}/cache (excluded)`).toEqual({});
      // The claim was provisioned anew (its data came through fs-backup) and is bound.
      const pvc = await getJson<{ spec: { volumeName?: string }; status?: { phase?: string } }>(['get', 'pvc', `data-${name}`, '-n', DB]);
      expect(pvc.status?.phase).toBe('Bound');
    }

    await waitFor(() => running(SHARED, 2), { timeoutMs: 180_000, intervalMs: 1000, description: 'restored shared pods Running' });
    expect(await filesOf(SHARED, 'reader-b', 'shared')).toEqual(written.get(`${SHARED}/reader-a/shared`));
  }, 420_000);

  it('rolls data back into claims that still exist: the StatefulSet is restored, its pods wait while the old data is written over', async () => {
    await kubectl(['delete', 'statefulset', 'db', '-n', DB, '--wait=true'], { timeoutMs: 120_000 });
    await kubectl(['delete', 'pods', '--all', '-n', DB, '--wait=false']);
    await waitFor(async () => (await podsOf(DB)).length === 0, { timeoutMs: 120_000, intervalMs: 1000, description: 'db pods gone' });
    // The claims and their volumes stay; the data in them changes after the backup.
    writeFileSync(join(await claimDataPath(DB, 'data-db-0'), 'rows.txt'), 'corrupted after the backup\n');

    const r = await run(['restore', 'create', 'db-1-rollback', '--from-backup', 'db-1', '--include-namespaces', DB, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(summary(await pvrsOf('db-1-rollback'))).toEqual([`${DB}/db-0/data:Completed`, `${DB}/db-1/data:Completed`]);
    await waitFor(() => running(DB, 2), { timeoutMs: 180_000, intervalMs: 1000, description: 'rolled-back db pods Running' });
    for (const name of ['db-0', 'db-1']) expect(await filesOf(DB, name, 'data'), `${name}/data`).toEqual(written.get(`${DB}/${name}/data`));
  }, 300_000);

  it('after deleting a later backup, its snapshots and PVBs are gone and the earlier backup restores into a mapped namespace next to the source', async () => {
    const webPods = (await podsOf(WEB)).filter((p) => p.metadata.labels?.app === 'web');
    const sourceUids = webPods.map((p) => p.metadata.uid).sort();
    const first = written.get(`${WEB}/${webPods[0]?.metadata.name ?? ''}/content`) ?? {};
    await write(WEB, webPods[0]?.metadata.name ?? '', 'content', { 'later.txt': 'only in the second backup\n' });

    const r = await run(['backup', 'create', 'web-2', '--include-namespaces', WEB, '--wait']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const snapshotIDs = (await pvbsOf('web-2')).map((p) => p.status?.snapshotID ?? '');
    expect(snapshotIDs).toHaveLength(2);
    const del = await run(['backup', 'delete', 'web-2', '--confirm']);
    expect(del.exitCode, `${del.stdout}\n${del.stderr}`).toBe(0);
    await waitFor(async () => (await run(['backup', 'get', 'web-2'])).exitCode !== 0, { timeoutMs: 120_000, intervalMs: 1000, description: 'backup web-2 deleted' });
    expect(await pvbsOf('web-2')).toEqual([]);
    const { repository } = await openRepositoryForVolume({ kube: k, namespace: NS, bslName: 'default', volumeNamespace: WEB });
    const left = (await repository.snapshots.list()).map((s) => s.id);
    for (const id of snapshotIDs) expect(left).not.toContain(id);
    for (const p of await pvbsOf('web-1')) expect(left).toContain(p.status?.snapshotID);

    const rr = await run(['restore', 'create', 'web-1-mapped', '--from-backup', 'web-1', '--namespace-mappings', `${WEB}:${WEB_MAPPED}`, '--wait']);
    expect(rr.exitCode, `${rr.stdout}\n${rr.stderr}`).toBe(0);
    const pvrs = await pvrsOf('web-1-mapped');
    expect(summary(pvrs)).toEqual(webPods.map((p) => `${WEB_MAPPED}/${p.metadata.name}/content:Completed`).sort());
    // The data comes from the source namespace's repository: no repository is made for the mapped namespace.
    for (const p of pvrs) expect(p.spec.sourceNamespace).toBe(WEB);
    const repos = await getJson<{ items: { spec: { volumeNamespace: string } }[] }>(['get', 'backuprepositories', '-n', NS]);
    expect(repos.items.map((x) => x.spec.volumeNamespace)).not.toContain(WEB_MAPPED);

    const mapped = await waitFor(async () => {
      const pods = (await podsOf(WEB_MAPPED)).filter((p) => p.metadata.labels?.app === 'web');
      return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
    }, { timeoutMs: 180_000, intervalMs: 1000, description: 'mapped web pods Running' });
    // The restored ReplicaSet adopted the restored pods (the ones the data went into) instead of making new ones.
    await waitFor(
      async () => {
        const pods = (await podsOf(WEB_MAPPED)).filter((p) => p.metadata.labels?.app === 'web');
        return pods.length === 2 && pods.every((p) => p.metadata.ownerReferences?.some((o) => o.kind === 'ReplicaSet' && o.controller));
      },
      { timeoutMs: 60_000, intervalMs: 1000, description: 'mapped web pods owned by their ReplicaSet' },
    );
    for (const p of mapped) {
      const pvr = pvrs.find((x) => x.spec.pod.name === p.metadata.name);
      expect(pvr?.metadata.labels?.['velero.io/pod-uid'], p.metadata.name).toBe(p.metadata.uid);
      const want = written.get(`${WEB}/${p.metadata.name}/content`) ?? {};
      const { ['later.txt']: _later, ...fromFirst } = want;
      expect(await filesOf(WEB_MAPPED, p.metadata.name, 'content'), p.metadata.name).toEqual(p.metadata.name === webPods[0]?.metadata.name ? first : fromFirst);
      // Not asked for, so not backed up: the restored emptyDir is empty.
      expect(await filesOf(WEB_MAPPED, p.metadata.name, 'tmp')).toEqual({});
    }
    // The misnamed and the unscheduled pod come back without restore-wait (no PVB of theirs).
    const typo = (await podsOf(WEB_MAPPED)).find((p) => p.metadata.name === 'typo');
    expect(typo?.spec.initContainers ?? []).toEqual([]);
    // Nothing in the source changed.
    expect((await podsOf(WEB)).filter((p) => p.metadata.labels?.app === 'web').map((p) => p.metadata.uid).sort()).toEqual(sourceUids);
    expect(await filesOf(WEB, webPods[0]?.metadata.name ?? '', 'content')).toEqual(written.get(`${WEB}/${webPods[0]?.metadata.name ?? ''}/content`));
  }, 420_000);

  it('a backup whose pod volume backup was canceled is PartiallyFailed; its restore brings the pod back waiting only for the other volume and is PartiallyFailed', async () => {
    const create = await run(['backup', 'create', 'victim-1', '--include-namespaces', VICTIM]);
    expect(create.exitCode, create.stderr).toBe(0);
    // Cancel the `lost` volume's PVB as soon as the server makes it, as an operator with `kubectl patch` would.
    const lost = await waitFor(async () => (await pvbsOf('victim-1')).find((p) => p.spec.volume === 'lost'), { timeoutMs: 120_000, intervalMs: 200, description: 'PVB of volume lost' });
    await kubectl(['patch', 'podvolumebackup', lost.metadata.name, '-n', NS, '--type', 'merge', '-p', '{"spec":{"cancel":true}}']);
    const phase = await waitFor(
      async () => {
        const b = JSON.parse((await run(['backup', 'get', 'victim-1', '-o', 'json'])).stdout) as { status?: { phase?: string } };
        return ['Completed', 'PartiallyFailed', 'Failed'].includes(b.status?.phase ?? '') ? b.status?.phase : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000, description: 'backup victim-1 finished' },
    );
    expect(phase).toBe('PartiallyFailed');
    // A crash-looping pod stays in phase Running between restarts, so its volume is backed up, as in Velero.
    const pvbs = await pvbsOf('victim-1');
    expect(summary(pvbs)).toEqual([`${VICTIM}/crashy/empty:Completed`, `${VICTIM}/crashy/logs:Completed`, `${VICTIM}/victim/keep:Completed`, `${VICTIM}/victim/lost:Canceled`]);
    // An empty volume completes without a snapshot, so nothing is restored into it.
    const empty = pvbs.find((p) => p.spec.volume === 'empty');
    expect(empty?.status?.snapshotID ?? '').toBe('');
    expect(empty?.status?.message).toBe('volume was empty so no snapshot was taken');

    await deleteNamespaces(VICTIM);
    const r = await run(['restore', 'create', 'victim-1-restore', '--from-backup', 'victim-1', '--wait']);
    // The canceled volume was not restored, so the restore does not claim success (exit 1, PartiallyFailed).
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(1);
    expect(r.stdout).toContain('Restore completed with status: PartiallyFailed.');
    expect(summary(await pvrsOf('victim-1-restore'))).toEqual([`${VICTIM}/crashy/logs:Completed`, `${VICTIM}/victim/keep:Completed`]);
    await waitFor(() => running(VICTIM, 2), { timeoutMs: 180_000, intervalMs: 1000, description: 'restored victim and crashy pods Running' });
    expect(await filesOf(VICTIM, 'crashy', 'logs')).toEqual(written.get(`${VICTIM}/crashy/logs`));
    const restored = await getJson<{ spec: { initContainers?: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[] } }>(['get', 'pod', 'victim', '-n', VICTIM]);
    // (The API server's service-account admission adds its token mount to every container, restore-wait too.)
    const waitMounts = restored.spec.initContainers?.find((c) => c.name === 'restore-wait')?.volumeMounts ?? [];
    expect(waitMounts.filter((m) => m.mountPath.startsWith('/restores/')).map((m) => m.name)).toEqual(['keep']);
    expect(await filesOf(VICTIM, 'victim', 'keep')).toEqual(written.get(`${VICTIM}/victim/keep`));
    expect(await filesOf(VICTIM, 'victim', 'lost')).toEqual({});
  }, 420_000);
});
