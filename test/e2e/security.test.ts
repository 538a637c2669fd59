/**
 * Pod security and secrets on real nodes (kubelet + containerd), checked where they take effect rather than in the
 * manifests: a file-system backup and restore of a volume holding files of another owner, read back from the
 * nodes' /proc while it runs (test/support/node-processes.ts).
 *
 * - Each of cairn's processes holds what docs/security.md says, every one on a read-only root filesystem: the server
 *   non-root, no capabilities; the node agent and backup pods root with DAC_READ_SEARCH alone; restore pods root with CHOWN,
 *   DAC_OVERRIDE, FOWNER and FSETID; all of them no_new_privs and the runtime's seccomp filter. The namespace is
 *   labelled for Pod Security admission.
 * - Canaries: the object store's key pair (the test bed's, unique to this cluster) and a repository password of the
 *   test's own are searched for everywhere a secret could leak: the arguments and environment of every process
 *   running /cairn, the pods' logs (the nodes' log files), Events, pod specs, every velero.io object, the bucket's
 *   objects (backup files, logs, the repository), and what the CLI prints (describe --details, get -o json|yaml,
 *   logs). None may hold any.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyWithNamespace, clusterInfo, dropFinalizers, kubectl, namespacesGone, s3Client } from '../support/cluster.js';
import { cairn, type CliResult, locationAvailable } from '../support/cli.js';
import { podVolumeDir, nodeFile } from '../support/node-paths.js';
import { cairnProcesses, capabilityMask, type CairnProcess } from '../support/node-processes.js';
import { readTree, timeMismatches, withoutTimes, writeDataset, type Tree } from '../support/volume-tree.js';
import { sampleWhile, waitFor } from '../support/wait.js';

const NS = 'cairn-e2e-sec';
const APP = 'e2e-sec-app';
const POD = 'vault';
const VOLUMES = ['data', 'scratch'] as const;
const BACKUP = 'sec-1';
const RESTORE = 'sec-1-restore';

/** seccomp mode 2: a filter is loaded (RuntimeDefault). */
const SECCOMP_FILTER = 2;

interface PodJson {
  metadata: { name: string; uid: string; namespace: string };
  spec: { nodeName?: string; volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[] };
  status?: { phase?: string };
}

function appObjects(node: string): string {
  return `apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, namespace: ${APP} }
spec:
  accessModes: [ReadWriteOnce]
  resources: { requests: { storage: 1Gi } }
---
apiVersion: v1
kind: Pod
metadata:
  name: ${POD}
  namespace: ${APP}
  annotations: { backup.velero.io/backup-volumes: "data,scratch" }
spec:
  nodeSelector: { kubernetes.io/hostname: ${node} }
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      command: [sh, -c, "exec sleep 100000"]
      volumeMounts:
        - { name: data, mountPath: /data }
        - { name: scratch, mountPath: /scratch }
  volumes:
    - name: data
      persistentVolumeClaim: { claimName: data }
    - name: scratch
      emptyDir: {}
`;
}

/** What a process is, from its arguments: the roles docs/security.md describes. */
function roleOf(p: CairnProcess): 'server' | 'node-agent' | 'backup' | 'restore' | 'other' {
  const [a, b] = p.args;
  if (a === 'server') return 'server';
  if (a === 'node-agent' && b === 'server') return 'node-agent';
  if ((a === 'pod-volume' || a === 'data-mover') && b === 'backup') return 'backup';
  if ((a === 'pod-volume' || a === 'data-mover') && b === 'restore') return 'restore';
  return 'other';
}

/** Every regular file under `dir` (missing directories are empty). */
function filesUnder(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const p = join(dir, n);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) return [];
    return st.isDirectory() ? filesUnder(p) : st.isFile() ? [p] : [];
  });
}

describe('pod security and secrets on real nodes', () => {
  let kubeconfig: string;
  let installPrefix: string;
  const run = (args: string[]): Promise<CliResult> => cairn([...args, '-n', NS], { kubeconfig });
  /** The canaries, by what they are. */
  const canaries = new Map<string, string>();
  /** Every /cairn process of this install seen while the backup and the restore ran, by pid. */
  const seen = new Map<number, CairnProcess & { role: ReturnType<typeof roleOf> }>();
  /** Canaries found in the arguments or environment of a process. */
  const processLeaks: string[] = [];
  /** Pod specs of the install namespace, as they were while the data movers ran. */
  const podSpecs: string[] = [];
  const expected = new Map<string, Tree>();

  /** Which canaries `text` holds, as they are or base64-encoded, for the message of a failed check. */
  function leaks(where: string, text: string): string[] {
    const found: string[] = [];
    for (const [what, value] of canaries) {
      if (text.includes(value)) found.push(`${where}: ${what}`);
      else if (text.includes(Buffer.from(value).toString('base64'))) found.push(`${where}: ${what} (base64)`);
    }
    return found;
  }

  function sampleProcesses(): void {
    for (const p of cairnProcesses()) {
      if (p.env.CAIRN_NAMESPACE === NS && !seen.has(p.pid)) seen.set(p.pid, { ...p, role: roleOf(p) });
      // Every /cairn process of the machine: a canary is this cluster's alone, wherever it shows up.
      const what = `pid ${p.pid} (${p.args.slice(0, 2).join(' ')})`;
      processLeaks.push(...leaks(`${what} arguments`, p.rawCmdline), ...leaks(`${what} environment`, p.rawEnviron));
    }
  }

  async function sampleWhileRunning<T>(work: Promise<T>): Promise<T> {
    let last = 0;
    return sampleWhile(work, 250, async () => {
      sampleProcesses();
      if (Date.now() - last > 2000) {
        last = Date.now();
        podSpecs.push((await kubectl(['get', 'pods', '-n', NS, '-o', 'json'])).stdout);
      }
    });
  }

  async function appPod(): Promise<PodJson> {
    return JSON.parse((await kubectl(['get', 'pod', POD, '-n', APP, '-o', 'json'])).stdout) as PodJson;
  }

  beforeAll(async () => {
    const info = clusterInfo();
    kubeconfig = info.kubeconfigPath;
    canaries.set('object store access key id', info.s3.accessKeyId);
    canaries.set('object store secret key', info.s3.secretAccessKey);
    canaries.set('repository password', `canary-repository-password-${randomBytes(12).toString('hex')}`);
    const dir = mkdtempSync(join(tmpdir(), 'cairn-e2e-sec-'));
    const creds = join(dir, 'credentials');
    writeFileSync(creds, `[default]\naws_access_key_id = ${info.s3.accessKeyId}\naws_secret_access_key = ${info.s3.secretAccessKey}\n`, { mode: 0o600 });
    await namespacesGone([NS, APP]);
    installPrefix = `e2e-sec-${Date.now()}`;
    const install = await cairn(
      [
        'install', '-n', NS, '--provider', 'aws', '--bucket', info.s3.bucket, '--prefix', installPrefix, '--secret-file', creds,
        '--backup-location-config', `region=${info.s3.region},s3Url=${info.s3.endpoint},s3ForcePathStyle=true`,
        '--use-node-agent', '--image', info.image, '--kubelet-root-dir', info.kubeletRootDir, '--wait', '--timeout', '4m',
      ],
      { kubeconfig },
    );
    expect(install.exitCode, install.stderr).toBe(0);
    // The repository password: the user's, before the first backup makes the repository (Velero's Secret and key).
    await kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'velero-repo-credentials', namespace: NS }, stringData: { 'repository-password': canaries.get('repository password') } }),
    });
    await locationAvailable(run);
    await applyWithNamespace(APP, appObjects(info.nodes[0]!.name));
    await waitFor(async () => (await appPod()).status?.phase === 'Running', { timeoutMs: 120_000, intervalMs: 1000, description: `pod ${POD} Running` });
    const pod = await appPod();
    writeDataset(await podVolumeDir(pod, 'data'), { large: [8], small: 200, seed: 1 });
    writeDataset(await podVolumeDir(pod, 'scratch'), { large: [4], small: 100, seed: 2 });
    for (const v of VOLUMES) expected.set(v, readTree(await podVolumeDir(pod, v)));
  }, 360_000);

  afterAll(async () => {
    await dropFinalizers(NS);
    await kubectl(['delete', 'namespace', APP, NS, '--ignore-not-found', '--wait=false'], { allowFailure: true });
  });

  it('labels the install namespace for Pod Security admission: privileged, since the node agent mounts a host path', async () => {
    const ns = JSON.parse((await kubectl(['get', 'namespace', NS, '-o', 'json'])).stdout) as { metadata: { labels?: Record<string, string> } };
    expect(ns.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('privileged');
  });

  it('backs up and restores a volume of files another user owns, each data mover holding only its capabilities', async () => {
    sampleProcesses();
    const backup = await sampleWhileRunning(run(['backup', 'create', BACKUP, '--include-namespaces', APP, '--wait']));
    expect(backup.exitCode, `${backup.stdout}\n${backup.stderr}`).toBe(0);
    expect(backup.stdout).toContain('Backup completed with status: Completed.');

    await kubectl(['delete', 'namespace', APP, '--wait=false']);
    await waitFor(async () => (await kubectl(['get', 'namespace', APP], { allowFailure: true })).exitCode !== 0, { timeoutMs: 120_000, intervalMs: 1000, description: `namespace ${APP} deleted` });
    const restore = await sampleWhileRunning(run(['restore', 'create', RESTORE, '--from-backup', BACKUP, '--wait']));
    expect(restore.exitCode, `${restore.stdout}\n${restore.stderr}`).toBe(0);
    expect(restore.stdout).toContain('Restore completed with status: Completed.');
    const pod = await appPod();
    for (const v of VOLUMES) {
      const got = readTree(await podVolumeDir(pod, v));
      expect(withoutTimes(got), v).toEqual(withoutTimes(expected.get(v) ?? {}));
      expect(timeMismatches(expected.get(v) ?? {}, got), `${v} mtimes`).toEqual([]);
    }
    sampleProcesses();

    const byRole = (role: string) => [...seen.values()].filter((p) => p.role === role);
    const describeProcess = (p: CairnProcess) => `pid ${p.pid} ${p.args.slice(0, 3).join(' ')}: uid ${p.status.uid}, CapEff ${p.status.capEff.toString(16)}, no_new_privs ${p.status.noNewPrivs}, seccomp ${p.status.seccompMode}`;
    const expectations: { role: string; uid: number; caps: bigint; readOnlyRoot?: boolean }[] = [
      { role: 'server', uid: 65532, caps: 0n, readOnlyRoot: true },
      { role: 'node-agent', uid: 0, caps: capabilityMask(['DAC_READ_SEARCH']), readOnlyRoot: true },
      { role: 'backup', uid: 0, caps: capabilityMask(['DAC_READ_SEARCH']), readOnlyRoot: true },
      { role: 'restore', uid: 0, caps: capabilityMask(['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID']), readOnlyRoot: true },
    ];
    for (const e of expectations) {
      const procs = byRole(e.role);
      expect(procs.length, `${e.role} processes seen (all seen: ${[...seen.values()].map(describeProcess).join('; ')})`).toBeGreaterThan(0);
      for (const p of procs) {
        expect(
          { uid: p.status.uid, capEff: p.status.capEff.toString(16), noNewPrivs: p.status.noNewPrivs, seccomp: p.status.seccompMode },
          `${e.role}: ${describeProcess(p)}`,
        ).toEqual({ uid: e.uid, capEff: e.caps.toString(16), noNewPrivs: true, seccomp: SECCOMP_FILTER });
        if (e.readOnlyRoot !== undefined) expect(p.readOnlyRoot, `${e.role}: root filesystem read-only`).toBe(e.readOnlyRoot);
      }
    }
  }, 600_000);

  it('shows no canary in the arguments or environment of any process running /cairn', () => {
    expect(seen.size).toBeGreaterThan(3);
    expect([...new Set(processLeaks)]).toEqual([]);
  });

  it('shows no canary in pod specs, and takes every secret from a Secret, never from a literal', async () => {
    podSpecs.push((await kubectl(['get', 'pods', '-n', NS, '-o', 'json'])).stdout);
    expect(podSpecs.flatMap((s, i) => leaks(`pods of ${NS} (sample ${i})`, s))).toEqual([]);
    // Credentials reach the pods as a mounted Secret: the environment names files, never holds keys.
    for (const text of podSpecs) {
      const pods = (JSON.parse(text) as { items: { metadata: { name: string }; spec: { containers: { env?: { name: string; value?: string }[] }[] } }[] }).items;
      for (const p of pods) {
        for (const e of p.spec.containers.flatMap((c) => c.env ?? [])) {
          if (/KEY|SECRET|PASSWORD|TOKEN/i.test(e.name)) expect(e.value, `${p.metadata.name}: env ${e.name}`).toBeUndefined();
        }
      }
    }
  });

  it('shows no canary in the pods\' logs on the nodes, in Events, or in any velero.io object', async () => {
    const found: string[] = [];
    for (const node of clusterInfo().nodes) {
      const podsLogDir = nodeFile(node.name, '/var/log/pods');
      for (const dir of readdirSync(podsLogDir).filter((d) => d.startsWith(`${NS}_`) || d.startsWith(`${APP}_`))) {
        for (const f of filesUnder(join(podsLogDir, dir))) found.push(...leaks(`${node.name}:${f.slice(podsLogDir.length)}`, readFileSync(f, 'latin1')));
      }
    }
    for (const pod of ['deploy/cairn', 'ds/node-agent']) {
      found.push(...leaks(`kubectl logs ${pod}`, (await kubectl(['logs', pod, '-n', NS, '--all-containers'], { allowFailure: true })).stdout));
    }
    found.push(...leaks('Events', (await kubectl(['get', 'events', '-A', '-o', 'json'])).stdout));
    const resources = (await kubectl(['api-resources', '--api-group=velero.io', '-o', 'name'])).stdout.split('\n').filter(Boolean);
    expect(resources.length).toBeGreaterThan(10);
    for (const r of resources) found.push(...leaks(r, (await kubectl(['get', r, '-A', '-o', 'json'])).stdout));
    found.push(...leaks(`ConfigMaps of ${NS}`, (await kubectl(['get', 'configmaps', '-n', NS, '-o', 'json'])).stdout));
    expect(found).toEqual([]);
  });

  it('shows no canary in the bucket: backup files, logs, the repository', async () => {
    const s3 = s3Client();
    const { bucket } = clusterInfo().s3;
    const found: string[] = [];
    let token: string | undefined;
    let objects = 0;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${installPrefix}/`, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const body = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key }))).Body!.transformToByteArray());
        objects++;
        const text = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body).toString('latin1') : body.toString('latin1');
        found.push(...leaks(o.Key ?? '', text));
      }
      token = page.NextContinuationToken;
    } while (token);
    expect(objects).toBeGreaterThan(5);
    expect(found).toEqual([]);
  });

  it('shows no canary in what the CLI prints: describe --details, get -o json|yaml, logs', async () => {
    const found: string[] = [];
    const commands = [
      ['backup', 'describe', BACKUP, '--details'],
      ['backup', 'get', BACKUP, '-o', 'json'],
      ['backup', 'get', BACKUP, '-o', 'yaml'],
      ['backup', 'logs', BACKUP],
      ['restore', 'describe', RESTORE, '--details'],
      ['restore', 'get', RESTORE, '-o', 'json'],
      ['restore', 'get', RESTORE, '-o', 'yaml'],
      ['restore', 'logs', RESTORE],
      ['backup-location', 'get', '-o', 'yaml'],
      ['repo', 'get', '-o', 'yaml'],
    ];
    for (const args of commands) {
      const r = await run(args);
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      found.push(...leaks(`cairn ${args.join(' ')}`, r.stdout + r.stderr));
    }
    expect(found).toEqual([]);
  });
});
