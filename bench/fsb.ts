// `npm run bench:fsb [-- options]`: end-to-end fs-backup and restore of one pod volume through a local cluster
// (server → PodVolumeBackup → node-agent → data-mover pod → Events → Completed) versus the data path alone
// (`cairn repo backup|restore`) on the same data, and the difference: the micro-service round trip per volume.
// Progress goes to stderr; the report to stdout and to bench/results/fsb-<date>.json. See docs/benchmarks.md.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { Kinds, parsePodVolumeBackup, parsePodVolumeRestore, type PodVolumeBackup, type PodVolumeRestore } from '../src/api/index.js';
import { connect } from '../src/kube/client.js';
import { customClient } from '../src/kube/custom.js';
import { cacheRoot } from '../tools/local-cluster/paths.js';
import type { ClusterState } from '../tools/local-cluster/state.js';
import { buildIfMissing, ClusterHarness, clusterFor, log, must, projectRoot, runProgram } from './cluster/harness.js';
import { loadCorpus } from './datapath/corpus.js';
import { writeFiles } from './datapath/dataset-store.js';
import { defaultRealSources, loadOrBuildRealManifest, realDataset } from './datapath/real-dataset.js';
import { digestTree, firstDifference } from './datapath/tree-digest.js';
import { FSB_USAGE, FsbUsageError, parseFsbArgs, type FsbArgs } from './fsb/args.js';
import { scaledMixedDataset } from './fsb/dataset.js';
import { renderFsbReport, type FsbStep } from './fsb/report.js';
import { between, TimelineWatcher, type Timeline } from './fsb/timeline.js';

const INSTALL_NS = 'cairn-bench-fsb';
const APP_NS = 'bench-fsb-app';
const BACKUP = 'bench-fsb-1';
const RESTORE = 'bench-fsb-1-restore';
const REPO_PASSWORD = 'bench-fsb-only-password';
const STEP_TIMEOUT_MS = 30 * 60_000;

class Bench {
  private readonly h: ClusterHarness;

  constructor(
    private readonly state: ClusterState,
    private readonly args: FsbArgs,
  ) {
    this.h = new ClusterHarness(state, INSTALL_NS);
  }

  async run(): Promise<{ steps: FsbStep[]; title: string; nodeAgentRestarts: number }> {
    const { state, args, h } = this;
    const scratch = mkdtempSync(join(cacheRoot(), 'bench-fsb-'));
    const prefix = `bench-fsb-${Date.now()}`;
    try {
      await h.cleanNamespaces([APP_NS]);
      // With a ConfigMap, so that the unchanged backup can be measured again without the node's listing cache.
      await h.install({ prefix, scratchDir: scratch, nodeAgentConfig: {} });

      const node = state.nodes[0];
      if (!node) throw new Error('the cluster has no node');
      log(`creating pod ${APP_NS}/app with one PVC volume on ${node.name} ...`);
      must('kubectl apply', await h.kubectl(['apply', '-f', '-'], appObjects(node.name)));
      await h.waitFor('pod app Running', async () => (await h.json<{ status?: { phase?: string } }>(['get', 'pod', 'app', '-n', APP_NS])).status?.phase === 'Running');
      const pvc = await h.json<{ spec: { volumeName?: string } }>(['get', 'pvc', 'data', '-n', APP_NS]);
      const volumeDir = join(node.rootDir, 'pv', pvc.spec.volumeName ?? '');
      const corpus = loadCorpus().bytes;
      const dataset = args.realMb
        ? realDataset(loadOrBuildRealManifest(join(cacheRoot(), 'bench-data'), defaultRealSources(projectRoot), args.realMb * 1e6, log), corpus)
        : scaledMixedDataset(corpus, { bigCount: args.bigCount, bigMiB: args.bigMiB, smallCount: args.smallCount });
      log(`writing ${dataset.title} into ${volumeDir} ...`);
      const totals = writeFiles(volumeDir, dataset.files());
      const digest = digestTree(volumeDir);
      const original = join(scratch, 'original');
      // A copy to diff against when a restore does not verify (the volume goes with its namespace).
      must('cp', await runProgram('cp', ['-a', volumeDir, original]));

      let restartsBefore = await h.nodeAgentRestarts();
      const kube = connect({ kubeconfig: state.kubeconfigPath });
      const clusterBackup = async (name: string): Promise<{ pvb: Timeline; seconds: number }> => {
        const pvbs = new TimelineWatcher<PodVolumeBackup>(customClient(kube, Kinds.PodVolumeBackup, parsePodVolumeBackup), INSTALL_NS, `velero.io/backup-name=${name}`);
        log(`cluster: backup create ${name} --wait ...`);
        pvbs.start();
        const done = must('backup create', await h.cairn(['backup', 'create', name, '-n', INSTALL_NS, '--include-namespaces', APP_NS, '--wait']));
        const [pvb] = await pvbs.waitAllTerminal(1, STEP_TIMEOUT_MS);
        await pvbs.stop();
        if (pvb?.phase !== 'Completed') throw new Error(`PodVolumeBackup ended ${pvb?.phase ?? 'missing'}: ${pvb?.message ?? ''}`);
        return { pvb, seconds: done.seconds };
      };
      const backup = await clusterBackup(BACKUP);

      const repoUrl = h.repoUrl(`${prefix}-datapath`);
      log('data path alone: repo init + repo backup ...');
      must('repo init', await h.repo(['init', '--repo', repoUrl], REPO_PASSWORD));
      const dpBackup = must('repo backup', await h.repo(['backup', volumeDir, '--repo', repoUrl, '-o', 'json'], REPO_PASSWORD));

      // Nothing changed since: the data mover takes the volume's directories from the node's listing cache, as
      // `repo backup` takes them from its local one; then both again without a cache.
      const again = await clusterBackup(`${BACKUP}-again`);
      log('data path alone: unchanged repo backup ...');
      const dpAgain = must('repo backup', await h.repo(['backup', volumeDir, '--repo', repoUrl, '-o', 'json'], REPO_PASSWORD));
      log('the node agent without a listing cache (ConfigMap listingCacheDir "") ...');
      const restartsBeforeRollout = await h.nodeAgentRestarts();
      await h.setNodeAgentConfig({ listingCacheDir: '' });
      // Pods of the new DaemonSet generation start from zero restarts.
      restartsBefore -= restartsBeforeRollout;
      const uncached = await clusterBackup(`${BACKUP}-uncached`);
      log('data path alone: unchanged repo backup --no-cache ...');
      const dpUncached = must('repo backup', await h.repo(['backup', volumeDir, '--repo', repoUrl, '--no-cache', '-o', 'json'], REPO_PASSWORD));

      log(`cluster: deleting ${APP_NS}, then restore create --wait ...`);
      must('kubectl delete', await h.kubectl(['delete', 'namespace', APP_NS, '--wait=true', '--timeout=5m']));
      const pvrs = new TimelineWatcher<PodVolumeRestore>(customClient(kube, Kinds.PodVolumeRestore, parsePodVolumeRestore), INSTALL_NS, `velero.io/restore-name=${RESTORE}`);
      pvrs.start();
      const restore = must('restore create', await h.cairn(['restore', 'create', RESTORE, '-n', INSTALL_NS, '--from-backup', BACKUP, '--wait']));
      const [pvr] = await pvrs.waitAllTerminal(1, STEP_TIMEOUT_MS);
      await pvrs.stop();
      if (pvr?.phase !== 'Completed') throw new Error(`PodVolumeRestore ended ${pvr?.phase ?? 'missing'}: ${pvr?.message ?? ''}`);
      // The data is in place once the PVR is Completed. Not waited for: the pod leaving restore-wait, which on the
      // local test bed can hang when other tests left empty /restores/<volume> directories on the host (containers
      // there see the host's file system).
      const restoredPvc = await h.json<{ spec: { volumeName?: string } }>(['get', 'pvc', 'data', '-n', APP_NS]);
      const restoredDir = join(node.rootDir, 'pv', restoredPvc.spec.volumeName ?? '');
      // The done-marker directory restore-wait could not remove (it runs as a non-root user), as with Velero.
      rmSync(join(restoredDir, '.velero'), { recursive: true, force: true });
      const clusterVerified = digestTree(restoredDir).sha256 === digest.sha256;
      if (!clusterVerified) log(`cluster restore differs: ${firstDifference(original, restoredDir) ?? '?'}`);

      log('data path alone: repo restore ...');
      const target = join(scratch, 'restored');
      const dpRestore = must('repo restore', await h.repo(['restore', 'latest', target, '--repo', repoUrl, '-o', 'json'], REPO_PASSWORD));
      const nested = join(target, volumeDir);
      const restoredRoot = existsSync(nested) ? nested : target;
      const dpVerified = digestTree(restoredRoot).sha256 === digest.sha256;
      if (!dpVerified) log(`data-path restore differs: ${firstDifference(original, restoredRoot) ?? '?'}`);

      const restarts = (await h.nodeAgentRestarts()) - restartsBefore;
      // A node agent that restarted during the run (e.g. its health port taken by another cluster's node agent on
      // the same loopback address) makes the cluster figures meaningless; say so next to them.
      if (restarts > 0) log(`WARNING: the node agent restarted ${restarts} time(s) during the run; the cluster figures include that`);
      const verified = clusterVerified && dpVerified;
      const steps: FsbStep[] = [
        step('backup', totals, dpBackup.seconds, backup.pvb, backup.seconds, verified),
        step('unchanged backup', totals, dpAgain.seconds, again.pvb, again.seconds, verified),
        step('unchanged, no cache', totals, dpUncached.seconds, uncached.pvb, uncached.seconds, verified),
        step('restore', totals, dpRestore.seconds, pvr, restore.seconds, verified),
      ];
      return { steps, title: dataset.title, nodeAgentRestarts: restarts };
    } finally {
      await h.cleanNamespaces([APP_NS]).catch((err: unknown) => log(`cleanup: ${String(err)}`));
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

function step(name: FsbStep['step'], totals: { files: number; bytes: number }, dataPathSeconds: number, t: Timeline, commandSeconds: number, verified: boolean): FsbStep {
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

async function main(): Promise<void> {
  const args = parseFsbArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(FSB_USAGE);
    return;
  }
  await buildIfMissing('pod-volume/backup');
  const loadBefore = loadavg()[0] ?? 0;
  const { state, stop } = await clusterFor({ reuse: args.reuse, keep: args.keep, name: 'bench-fsb', nodes: 1 });
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
