// `npm run bench:fsb [-- options]`: end-to-end fs-backup and restore of one pod volume through a local cluster
// (server → PodVolumeBackup → node-agent → data-mover pod → Events → Completed) versus the data path alone
// (`cairn repo backup|restore`) on the same data, and the difference: the micro-service round trip per volume.
// Progress goes to stderr; the report to stdout and to bench/results/fsb-<date>.json. See docs/benchmarks.md.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kinds, parsePodVolumeBackup, parsePodVolumeRestore, type PodVolumeBackup, type PodVolumeRestore } from '../src/api/index.js';
import { connect } from '../src/kube/client.js';
import { customClient } from '../src/kube/custom.js';
import { clusterHealth, down, up } from '../tools/local-cluster/cluster.js';
import { cacheRoot, defaultRunDir } from '../tools/local-cluster/paths.js';
import { readState, type ClusterState } from '../tools/local-cluster/state.js';
import { setupToolchain } from '../tools/local-cluster/toolchain.js';
import { loadCorpus } from './datapath/corpus.js';
import { writeFiles } from './datapath/dataset-store.js';
import { digestTree, firstDifference } from './datapath/tree-digest.js';
import { FSB_USAGE, FsbUsageError, parseFsbArgs, type FsbArgs } from './fsb/args.js';
import { scaledMixedDataset } from './fsb/dataset.js';
import { renderFsbReport, type FsbStep } from './fsb/report.js';
import { between, TimelineWatcher, type Timeline } from './fsb/timeline.js';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RUN_JS = join(projectRoot, 'bin', 'run.js');
const INSTALL_NS = 'cairn-bench-fsb';
const APP_NS = 'bench-fsb-app';
const BACKUP = 'bench-fsb-1';
const RESTORE = 'bench-fsb-1-restore';
const REPO_PASSWORD = 'bench-fsb-only-password';
const STEP_TIMEOUT_MS = 30 * 60_000;

const log = (line: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

const execFileAsync = promisify(execFile);

interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
  seconds: number;
}

/** Runs a program to its end; never throws for a non-zero exit (the caller decides). */
function runProgram(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, input = ''): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolvePromise({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code: code ?? 128, seconds: (performance.now() - started) / 1000 }),
    );
    child.stdin.end(input);
  });
}

function must(what: string, r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

class Bench {
  constructor(
    private readonly state: ClusterState,
    private readonly args: FsbArgs,
  ) {}

  private kubectl(args: string[], input = ''): Promise<RunResult> {
    return runProgram(this.state.binaries.kubectl, ['--kubeconfig', this.state.kubeconfigPath, ...args], process.env, input);
  }

  private cairn(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunResult> {
    return runProgram(process.execPath, [RUN_JS, ...args, '--kubeconfig', this.state.kubeconfigPath], { ...env, CI: '1' });
  }

  /** The data path alone: `cairn repo ...` with the bench password and the MinIO credentials, nothing from the cluster. */
  private repo(args: string[]): Promise<RunResult> {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(CAIRN_|AWS_)/.test(k)) env[k] = v;
    Object.assign(env, { CAIRN_REPO_PASSWORD: REPO_PASSWORD, AWS_ACCESS_KEY_ID: this.state.s3.accessKeyId, AWS_SECRET_ACCESS_KEY: this.state.s3.secretAccessKey });
    return runProgram(process.execPath, [RUN_JS, 'repo', ...args], env);
  }

  private async waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private async json<T>(args: string[]): Promise<T> {
    return JSON.parse(must(`kubectl ${args.join(' ')}`, await this.kubectl([...args, '-o', 'json'])).stdout) as T;
  }

  async run(): Promise<{ steps: FsbStep[]; title: string; nodeAgentRestarts: number }> {
    const { state, args } = this;
    const scratch = mkdtempSync(join(cacheRoot(), 'bench-fsb-'));
    const prefix = `bench-fsb-${Date.now()}`;
    try {
      await this.cleanNamespaces();
      log(`installing cairn into ${INSTALL_NS} (server + node-agent) ...`);
      const creds = join(scratch, 'credentials');
      writeFileSync(creds, `[default]\naws_access_key_id = ${state.s3.accessKeyId}\naws_secret_access_key = ${state.s3.secretAccessKey}\n`, { mode: 0o600 });
      must(
        'cairn install',
        await this.cairn([
          'install', '-n', INSTALL_NS, '--provider', 'aws', '--bucket', state.s3.bucket, '--prefix', prefix, '--secret-file', creds,
          '--backup-location-config', `region=${state.s3.region},s3Url=${state.s3.endpoint},s3ForcePathStyle=true`,
          '--use-node-agent', '--image', 'ghcr.io/cairn-backup/cairn:dev',
        ]),
      );
      await this.useFreeHealthPorts();
      await this.waitFor('backup location Available', async () => {
        const r = await this.cairn(['backup-location', 'get', 'default', '-n', INSTALL_NS, '-o', 'json']);
        return (JSON.parse(r.stdout) as { status?: { phase?: string } }).status?.phase === 'Available';
      });

      const node = state.nodes[0];
      if (!node) throw new Error('the cluster has no node');
      log(`creating pod ${APP_NS}/app with one PVC volume on ${node.name} ...`);
      must('kubectl apply', await this.kubectl(['apply', '-f', '-'], appObjects(node.name)));
      await this.waitFor('pod app Running', async () => (await this.json<{ status?: { phase?: string } }>(['get', 'pod', 'app', '-n', APP_NS])).status?.phase === 'Running');
      const pvc = await this.json<{ spec: { volumeName?: string } }>(['get', 'pvc', 'data', '-n', APP_NS]);
      const volumeDir = join(node.rootDir, 'pv', pvc.spec.volumeName ?? '');
      const dataset = scaledMixedDataset(loadCorpus().bytes, { bigCount: args.bigCount, bigMiB: args.bigMiB, smallCount: args.smallCount });
      log(`writing ${dataset.title} into ${volumeDir} ...`);
      const totals = writeFiles(volumeDir, dataset.files());
      const digest = digestTree(volumeDir);
      const original = join(scratch, 'original');
      // A copy to diff against when a restore does not verify (the volume goes with its namespace).
      must('cp', await runProgram('cp', ['-a', volumeDir, original]));

      const restartsBefore = await this.nodeAgentRestarts();
      const kube = connect({ kubeconfig: state.kubeconfigPath });
      const pvbs = new TimelineWatcher<PodVolumeBackup>(customClient(kube, Kinds.PodVolumeBackup, parsePodVolumeBackup), INSTALL_NS, `velero.io/backup-name=${BACKUP}`);
      log('cluster: backup create --wait ...');
      pvbs.start();
      const backup = must('backup create', await this.cairn(['backup', 'create', BACKUP, '-n', INSTALL_NS, '--include-namespaces', APP_NS, '--wait']));
      const [pvb] = await pvbs.waitAllTerminal(1, STEP_TIMEOUT_MS);
      await pvbs.stop();
      if (pvb?.phase !== 'Completed') throw new Error(`PodVolumeBackup ended ${pvb?.phase ?? 'missing'}: ${pvb?.message ?? ''}`);

      const repoUrl = `s3://${state.s3.bucket}/${prefix}-datapath?${new URLSearchParams({ endpoint: state.s3.endpoint, region: state.s3.region, forcePathStyle: 'true' }).toString()}`;
      log('data path alone: repo init + repo backup ...');
      must('repo init', await this.repo(['init', '--repo', repoUrl]));
      const dpBackup = must('repo backup', await this.repo(['backup', volumeDir, '--repo', repoUrl, '-o', 'json']));

      log(`cluster: deleting ${APP_NS}, then restore create --wait ...`);
      must('kubectl delete', await this.kubectl(['delete', 'namespace', APP_NS, '--wait=true', '--timeout=5m']));
      const pvrs = new TimelineWatcher<PodVolumeRestore>(customClient(kube, Kinds.PodVolumeRestore, parsePodVolumeRestore), INSTALL_NS, `velero.io/restore-name=${RESTORE}`);
      pvrs.start();
      const restore = must('restore create', await this.cairn(['restore', 'create', RESTORE, '-n', INSTALL_NS, '--from-backup', BACKUP, '--wait']));
      const [pvr] = await pvrs.waitAllTerminal(1, STEP_TIMEOUT_MS);
      await pvrs.stop();
      if (pvr?.phase !== 'Completed') throw new Error(`PodVolumeRestore ended ${pvr?.phase ?? 'missing'}: ${pvr?.message ?? ''}`);
      // The data is in place once the PVR is Completed. Not waited for: the pod leaving restore-wait, which on the
      // local test bed can hang when other tests left empty /restores/<volume> directories on the host (containers
      // there see the host's file system).
      const restoredPvc = await this.json<{ spec: { volumeName?: string } }>(['get', 'pvc', 'data', '-n', APP_NS]);
      const restoredDir = join(node.rootDir, 'pv', restoredPvc.spec.volumeName ?? '');
      // The done-marker directory restore-wait could not remove (it runs as a non-root user), as with Velero.
      rmSync(join(restoredDir, '.velero'), { recursive: true, force: true });
      const clusterVerified = digestTree(restoredDir).sha256 === digest.sha256;
      if (!clusterVerified) log(`cluster restore differs: ${firstDifference(original, restoredDir) ?? '?'}`);

      log('data path alone: repo restore ...');
      const target = join(scratch, 'restored');
      const dpRestore = must('repo restore', await this.repo(['restore', 'latest', target, '--repo', repoUrl, '-o', 'json']));
      const nested = join(target, volumeDir);
      const restoredRoot = existsSync(nested) ? nested : target;
      const dpVerified = digestTree(restoredRoot).sha256 === digest.sha256;
      if (!dpVerified) log(`data-path restore differs: ${firstDifference(original, restoredRoot) ?? '?'}`);

      const restarts = (await this.nodeAgentRestarts()) - restartsBefore;
      // A node agent that restarted during the run (e.g. its health port taken by another cluster's node agent on
      // the same loopback address) makes the cluster figures meaningless; say so next to them.
      if (restarts > 0) log(`WARNING: the node agent restarted ${restarts} time(s) during the run; the cluster figures include that`);
      const steps: FsbStep[] = [
        step('backup', totals, dpBackup.seconds, pvb, backup.seconds, clusterVerified && dpVerified),
        step('restore', totals, dpRestore.seconds, pvr, restore.seconds, clusterVerified && dpVerified),
      ];
      return { steps, title: dataset.title, nodeAgentRestarts: restarts };
    } finally {
      await this.cleanNamespaces().catch((err: unknown) => log(`cleanup: ${String(err)}`));
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Local-cluster pods share their node's loopback address, and another local cluster on this machine (the shared
   * test cluster) uses the same addresses: a second node agent on the default health port would crash-loop on
   * EADDRINUSE and the figures would measure its restarts. So the server and the node agent get free ports.
   */
  private async useFreeHealthPorts(): Promise<void> {
    for (const [kind, name] of [['deployment', 'cairn'], ['daemonset', 'node-agent']] as const) {
      const port = await freePort(this.state.nodes[0]?.ip ?? '127.0.0.1');
      const patch = [
        { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: `--health-port=${port}` },
        { op: 'replace', path: '/spec/template/spec/containers/0/ports/0/containerPort', value: port },
      ];
      must(`patch ${kind}/${name}`, await this.kubectl(['patch', kind, name, '-n', INSTALL_NS, '--type', 'json', '-p', JSON.stringify(patch)]));
    }
    must('rollout', await this.kubectl(['rollout', 'status', 'deployment/cairn', '-n', INSTALL_NS, '--timeout=5m']));
    must('rollout', await this.kubectl(['rollout', 'status', 'daemonset/node-agent', '-n', INSTALL_NS, '--timeout=5m']));
  }

  private async nodeAgentRestarts(): Promise<number> {
    const agents = await this.json<{ items: { status?: { containerStatuses?: { restartCount?: number }[] } }[] }>(['get', 'pods', '-n', INSTALL_NS, '-l', 'name=node-agent']);
    return agents.items.reduce((n, p) => n + (p.status?.containerStatuses ?? []).reduce((m, c) => m + (c.restartCount ?? 0), 0), 0);
  }

  /** Removes what a run leaves (also an interrupted earlier run's), not the CRDs others may share. */
  private async cleanNamespaces(): Promise<void> {
    // Restores keep the server's finalizer; deleted along with the server, nobody would remove it.
    const restores = await this.kubectl(['get', 'restores', '-n', INSTALL_NS, '-o', 'name']);
    for (const r of restores.stdout.split('\n').filter(Boolean)) {
      await this.kubectl(['patch', r, '-n', INSTALL_NS, '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}']);
    }
    await this.kubectl(['delete', 'namespace', APP_NS, '--ignore-not-found', '--wait=true', '--timeout=5m']);
    await this.kubectl(['delete', 'namespace', INSTALL_NS, '--ignore-not-found', '--wait=true', '--timeout=5m']);
  }
}

/** A port nothing listens on at `host` right now. */
function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function step(name: 'backup' | 'restore', totals: { files: number; bytes: number }, dataPathSeconds: number, t: Timeline, commandSeconds: number, verified: boolean): FsbStep {
  const end = t.seen.Completed ?? Date.now();
  return {
    step: name,
    bytes: totals.bytes,
    files: totals.files,
    dataPathSeconds,
    clusterSeconds: (end - (t.seen.created ?? end)) / 1000,
    phases: [
      { name: 'created→Accepted', seconds: between(t, 'created', 'Accepted') },
      { name: 'Accepted→Prepared', seconds: between(t, 'Accepted', 'Prepared') },
      { name: 'Prepared→InProgress', seconds: between(t, 'Prepared', 'InProgress') },
      { name: 'InProgress→Completed', seconds: between(t, 'InProgress', 'Completed') },
    ],
    commandSeconds,
    verified,
  };
}

function appObjects(nodeName: string): string {
  return `apiVersion: v1
kind: Namespace
metadata: { name: ${APP_NS} }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, namespace: ${APP_NS} }
spec:
  accessModes: [ReadWriteOnce]
  resources: { requests: { storage: 10Gi } }
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  namespace: ${APP_NS}
  annotations: { backup.velero.io/backup-volumes: data }
spec:
  nodeSelector: { kubernetes.io/hostname: ${nodeName} }
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      command: [sh, -c, "exec sleep 100000"]
      volumeMounts: [{ name: data, mountPath: /bench-fsb/data }]
  volumes:
    - name: data
      persistentVolumeClaim: { claimName: data }
`;
}

async function clusterFor(args: FsbArgs): Promise<{ state: ClusterState; stop: () => Promise<void> }> {
  await setupToolchain(log);
  if (args.reuse) {
    const state = readState(defaultRunDir('cairn'));
    if (!state || !(await clusterHealth(state)).healthy) throw new Error('--reuse: no healthy cluster from `npm run cluster:up`');
    log(`reusing the cluster in ${state.runDir}`);
    return { state, stop: async () => undefined };
  }
  const parent = join(cacheRoot(), 'run');
  mkdirSync(parent, { recursive: true });
  const runDir = mkdtempSync(join(parent, 'bench-fsb-'));
  const { state, seconds } = await up({ runDir, name: 'bench-fsb', nodes: 1, log });
  log(`fresh 1-node cluster up in ${seconds.toFixed(1)} s (${runDir})`);
  return {
    state,
    stop: async () => {
      await down({ runDir, keep: args.keep });
      log(args.keep ? `cluster stopped; run dir kept: ${runDir}` : 'cluster stopped');
    },
  };
}

async function main(): Promise<void> {
  const args = parseFsbArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(FSB_USAGE);
    return;
  }
  if (!existsSync(join(projectRoot, 'dist', 'commands', 'pod-volume', 'backup.js'))) {
    log('building cairn (npm run build) ...');
    await execFileAsync('npm', ['run', '--silent', 'build'], { cwd: projectRoot });
  }
  const loadBefore = loadavg()[0] ?? 0;
  const { state, stop } = await clusterFor(args);
  let result: { steps: FsbStep[]; title: string; nodeAgentRestarts: number };
  try {
    result = await new Bench(state, args).run();
  } finally {
    await stop();
  }
  const machine = `${availableParallelism()} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? 0).toFixed(2)} after`;
  const restartNote = result.nodeAgentRestarts ? `\nWARNING: the node agent restarted ${result.nodeAgentRestarts} time(s) during the run\n` : '';
  const report = `fs-backup through the cluster vs the data path alone — ${result.title}\n${machine}\n${restartNote}\n${renderFsbReport(result.steps)}`;
  process.stdout.write(report);
  const resultsDir = join(projectRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `fsb-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ args, machine, title: result.title, nodeAgentRestarts: result.nodeAgentRestarts, steps: result.steps }, null, 2) + '\n');
  log(`results written to ${file}`);
  if (result.steps.some((s) => !s.verified)) process.exitCode = 1;
}

main().catch((err: unknown) => {
  if (err instanceof FsbUsageError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`bench:fsb failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
