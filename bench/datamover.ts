// `npm run bench:datamover [-- options]`: CSI snapshot data movement of one volume through a local cluster with CSI
// (server → VolumeSnapshot + DataUpload → node-agent → snapshot exposed as a PVC → data-mover pod → Completed; on
// restore DataDownload → restore PVC → data-mover pod → PV re-bound to the workload's claim) versus the data path
// alone (`cairn repo backup|restore`) on the same data: a first backup, an incremental one after a small change, and
// a restore; kopia alone too (the uploader Velero's data mover runs on) when tools/peers/install-kopia.sh built it.
// Prints the figures and the ratios. Progress goes to stderr; the report to stdout and to
// bench/results/datamover-<date>.json. See docs/benchmarks.md.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { Kinds, parseDataDownload, parseDataUpload, type DataDownload, type DataUpload } from '../src/api/index.js';
import { connect, type Kube } from '../src/kube/client.js';
import { customClient } from '../src/kube/custom.js';
import { enableCsi } from '../tools/local-cluster/csi/enable.js';
import { cacheRoot } from '../tools/local-cluster/paths.js';
import type { ClusterState } from '../tools/local-cluster/state.js';
import { hostpathVolumePath } from '../test/support/csi-volume.js';
import { buildIfMissing, ClusterHarness, clusterFor, log, must, projectRoot, runProgram, type RunResult } from './cluster/harness.js';
import { DATAMOVER_USAGE, DatamoverUsageError, parseDatamoverArgs, type DatamoverArgs } from './datamover/args.js';
import { incrementalChange } from './datamover/change.js';
import { renderDatamoverReport, type DatamoverStep, type DatamoverStepName } from './datamover/report.js';
import { loadCorpus } from './datapath/corpus.js';
import { writeFiles } from './datapath/dataset-store.js';
import { kopiaTool } from './datapath/tools/kopia.js';
import type { ToolSession } from './datapath/tools/types.js';
import { digestTree, firstDifference } from './datapath/tree-digest.js';
import { scaledMixedDataset } from './fsb/dataset.js';
import { between, TimelineWatcher, type Timeline } from './fsb/timeline.js';

const INSTALL_NS = 'cairn-bench-dm';
const APP_NS = 'bench-dm-app';
const FIRST = 'bench-dm-1';
const SECOND = 'bench-dm-2';
const RESTORE = 'bench-dm-2-restore';
const REPO_PASSWORD = 'bench-datamover-only-password';
const STEP_TIMEOUT_MS = 30 * 60_000;

interface Measured {
  timeline: Timeline;
  command: RunResult;
}

class Bench {
  private readonly h: ClusterHarness;
  private readonly kube: Kube;

  constructor(
    private readonly state: ClusterState,
    private readonly args: DatamoverArgs,
  ) {
    this.h = new ClusterHarness(state, INSTALL_NS);
    this.kube = connect({ kubeconfig: state.kubeconfigPath });
  }

  /** The host path of the app's volume, where the CSI driver keeps it. */
  private async volumeDir(): Promise<string> {
    const pvc = await this.h.json<{ spec: { volumeName?: string } }>(['get', 'pvc', 'data', '-n', APP_NS]);
    const pv = await this.h.json<{ spec: { csi?: { volumeHandle: string } } }>(['get', 'pv', pvc.spec.volumeName ?? '']);
    return hostpathVolumePath(this.state.runDir, pv.spec.csi?.volumeHandle ?? '');
  }

  /** `backup create --snapshot-move-data --wait`, with the DataUpload's phases timed from outside. */
  private async backup(name: string): Promise<Measured> {
    const dus = new TimelineWatcher<DataUpload>(customClient(this.kube, Kinds.DataUpload, parseDataUpload), INSTALL_NS, `velero.io/backup-name=${name}`);
    dus.start();
    const command = must(`backup create ${name}`, await this.h.cairn(['backup', 'create', name, '-n', INSTALL_NS, '--include-namespaces', APP_NS, '--snapshot-move-data', '--wait']));
    const [timeline] = await dus.waitAllTerminal(1, STEP_TIMEOUT_MS);
    await dus.stop();
    if (timeline?.phase !== 'Completed') throw new Error(`DataUpload of ${name} ended ${timeline?.phase ?? 'missing'}: ${timeline?.message ?? ''}`);
    return { timeline, command };
  }

  /** kopia on its own repository in the cluster's MinIO, or why not. */
  private async kopia(prefix: string, scratch: string): Promise<{ session?: ToolSession; note: string }> {
    const tool = kopiaTool();
    const probe = await tool.probe();
    if (!probe.available) return { note: `kopia: ${probe.reason}` };
    const workDir = join(scratch, 'kopia');
    mkdirSync(workDir, { recursive: true });
    const { s3 } = this.state;
    const session = tool.open({ store: 's3', dir: '', workDir, s3: { endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, prefix: `${prefix}-kopia`, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    await session.init();
    return { session, note: `kopia: ${probe.version}, ${probe.settings}` };
  }

  async run(): Promise<RunOutcome> {
    const { state, args, h } = this;
    const scratch = mkdtempSync(join(cacheRoot(), 'bench-dm-'));
    const prefix = `bench-dm-${Date.now()}`;
    try {
      const csi = await enableCsi({ state, log });
      if (!csi.alreadyEnabled) log(`CSI enabled in ${csi.seconds.toFixed(1)} s`);
      await h.cleanNamespaces([APP_NS]);
      await h.install({ prefix, scratchDir: scratch });

      log(`creating pod ${APP_NS}/app with one ${csi.storageClass} claim ...`);
      must('kubectl apply', await h.kubectl(['apply', '-f', '-'], appObjects(csi.storageClass)));
      await h.waitFor('pod app Running', async () => (await h.json<{ status?: { phase?: string } }>(['get', 'pod', 'app', '-n', APP_NS])).status?.phase === 'Running');
      const volumeDir = await this.volumeDir();
      const dataset = scaledMixedDataset(loadCorpus().bytes, { bigCount: args.bigCount, bigMiB: args.bigMiB, smallCount: args.smallCount });
      log(`writing ${dataset.title} into ${volumeDir} ...`);
      const base = writeFiles(volumeDir, dataset.files());
      const restartsBefore = await h.nodeAgentRestarts();

      log('cluster: first backup with --snapshot-move-data ...');
      const first = await this.backup(FIRST);
      const repoUrl = h.repoUrl(`${prefix}-datapath`);
      log('data path alone: repo init + first repo backup ...');
      must('repo init', await h.repo(['init', '--repo', repoUrl], REPO_PASSWORD));
      const dpFirst = must('repo backup', await h.repo(['backup', volumeDir, '--repo', repoUrl, '-o', 'json'], REPO_PASSWORD));
      const kopia = await this.kopia(prefix, scratch);
      if (kopia.session) log('kopia alone: first snapshot create ...');
      const kopiaFirst = await kopia.session?.backup(volumeDir);

      const change = incrementalChange(dataset.files());
      log(`changing ${change.changedFiles} files (1 MiB of new bytes in one large file, a line appended to each small one) ...`);
      writeFiles(volumeDir, change.files);
      const changed = { files: base.files, bytes: base.bytes + change.addedBytes };
      const digest = digestTree(volumeDir);
      const original = join(scratch, 'original');
      // A copy to diff against when a restore does not verify (the volume goes with its namespace).
      must('cp', await runProgram('cp', ['-a', volumeDir, original]));

      log('cluster: incremental backup with --snapshot-move-data ...');
      const second = await this.backup(SECOND);
      log('data path alone: incremental repo backup ...');
      const dpSecond = must('repo backup', await h.repo(['backup', volumeDir, '--repo', repoUrl, '-o', 'json'], REPO_PASSWORD));
      if (kopia.session) log('kopia alone: incremental snapshot create ...');
      const kopiaSecond = await kopia.session?.backup(volumeDir);
      // kopia restores a source's latest snapshot by the source's path, which is about to go with the namespace.
      const kopiaTarget = join(scratch, 'kopia-restored');
      if (kopia.session) log('kopia alone: snapshot restore ...');
      const kopiaRestore = await kopia.session?.restore(volumeDir, kopiaTarget);
      const kopiaVerified = !kopiaRestore || digestTree(kopiaTarget).sha256 === digest.sha256;
      if (!kopiaVerified) log(`kopia restore differs: ${firstDifference(original, kopiaTarget) ?? '?'}`);

      log(`cluster: deleting ${APP_NS} (its volume goes too), then restore create --wait ...`);
      must('kubectl delete', await h.kubectl(['delete', 'namespace', APP_NS, '--wait=true', '--timeout=5m']));
      const dds = new TimelineWatcher<DataDownload>(customClient(this.kube, Kinds.DataDownload, parseDataDownload), INSTALL_NS, `velero.io/restore-name=${RESTORE}`);
      dds.start();
      const restore = must('restore create', await h.cairn(['restore', 'create', RESTORE, '-n', INSTALL_NS, '--from-backup', SECOND, '--wait']));
      const [dd] = await dds.waitAllTerminal(1, STEP_TIMEOUT_MS);
      await dds.stop();
      if (dd?.phase !== 'Completed') throw new Error(`DataDownload ended ${dd?.phase ?? 'missing'}: ${dd?.message ?? ''}`);
      // Completed means the data is in place and the restored PV is bound to the workload's claim.
      const restoredDir = await this.volumeDir();
      const clusterVerified = existsSync(restoredDir) && digestTree(restoredDir).sha256 === digest.sha256;
      if (!existsSync(restoredDir)) log(`cluster restore: the restored claim's volume ${restoredDir} does not exist`);
      else if (!clusterVerified) log(`cluster restore differs: ${firstDifference(original, restoredDir) ?? '?'}`);

      log('data path alone: repo restore ...');
      const target = join(scratch, 'restored');
      const dpRestore = must('repo restore', await h.repo(['restore', 'latest', target, '--repo', repoUrl, '-o', 'json'], REPO_PASSWORD));
      const nested = join(target, volumeDir);
      const restoredRoot = existsSync(nested) ? nested : target;
      const dpVerified = digestTree(restoredRoot).sha256 === digest.sha256;
      if (!dpVerified) log(`data-path restore differs: ${firstDifference(original, restoredRoot) ?? '?'}`);

      const restarts = (await h.nodeAgentRestarts()) - restartsBefore;
      if (restarts > 0) log(`WARNING: the node agent restarted ${restarts} time(s) during the run; the cluster figures include that`);
      const verified = clusterVerified && dpVerified && kopiaVerified;
      const steps: DatamoverStep[] = [
        step('first backup', base, { dataPath: dpFirst.seconds, kopia: kopiaFirst?.measurement.wallSeconds }, first, verified),
        step('incremental backup', changed, { dataPath: dpSecond.seconds, kopia: kopiaSecond?.measurement.wallSeconds }, second, verified),
        step('restore', changed, { dataPath: dpRestore.seconds, kopia: kopiaRestore?.measurement.wallSeconds }, { timeline: dd, command: restore }, verified),
      ];
      return { steps, title: dataset.title, nodeAgentRestarts: restarts, kopiaNote: kopia.note };
    } finally {
      await h.cleanNamespaces([APP_NS]).catch((err: unknown) => log(`cleanup: ${String(err)}`));
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

interface RunOutcome {
  steps: DatamoverStep[];
  title: string;
  nodeAgentRestarts: number;
  kopiaNote: string;
}

function step(name: DatamoverStepName, totals: { files: number; bytes: number }, alone: { dataPath: number; kopia: number | undefined }, m: Measured, verified: boolean): DatamoverStep {
  const t = m.timeline;
  const end = t.seen.Completed ?? Date.now();
  return {
    step: name,
    bytes: totals.bytes,
    files: totals.files,
    dataPathSeconds: alone.dataPath,
    kopiaSeconds: alone.kopia,
    dataMoverSeconds: (end - (t.seen.created ?? end)) / 1000,
    phases: [
      { name: 'created→Accepted', seconds: between(t, 'created', 'Accepted') },
      { name: 'Accepted→Prepared', seconds: between(t, 'Accepted', 'Prepared') },
      { name: 'Prepared→InProgress', seconds: between(t, 'Prepared', 'InProgress') },
      { name: 'InProgress→Completed', seconds: between(t, 'InProgress', 'Completed') },
    ],
    commandSeconds: m.command.seconds,
    verified,
  };
}

function appObjects(storageClass: string): string {
  return `apiVersion: v1
kind: Namespace
metadata: { name: ${APP_NS} }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, namespace: ${APP_NS} }
spec:
  storageClassName: ${storageClass}
  accessModes: [ReadWriteOnce]
  resources: { requests: { storage: 10Gi } }
---
apiVersion: v1
kind: Pod
metadata: { name: app, namespace: ${APP_NS} }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: busybox
      command: [sh, -c, "exec sleep 100000"]
      volumeMounts: [{ name: data, mountPath: /bench-dm/data }]
  volumes:
    - name: data
      persistentVolumeClaim: { claimName: data }
`;
}

async function main(): Promise<void> {
  const args = parseDatamoverArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(DATAMOVER_USAGE);
    return;
  }
  await buildIfMissing('data-mover/backup');
  const loadBefore = loadavg()[0] ?? 0;
  const { state, stop } = await clusterFor({ reuse: args.reuse, keep: args.keep, name: 'bench-dm', nodes: 1 });
  let result: RunOutcome;
  try {
    result = await new Bench(state, args).run();
  } finally {
    await stop();
  }
  const machine = `${availableParallelism()} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? 0).toFixed(2)} after`;
  const restartNote = result.nodeAgentRestarts ? `\nWARNING: the node agent restarted ${result.nodeAgentRestarts} time(s) during the run\n` : '';
  const report = `CSI snapshot data movement through the cluster vs the data path alone — ${result.title}\n${machine}\n${restartNote}\n${renderDatamoverReport(result.steps, result.kopiaNote)}`;
  process.stdout.write(report);
  const resultsDir = join(projectRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `datamover-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ args, machine, title: result.title, nodeAgentRestarts: result.nodeAgentRestarts, kopia: result.kopiaNote, steps: result.steps }, null, 2) + '\n');
  log(`results written to ${file}`);
  if (result.steps.some((s) => !s.verified)) process.exitCode = 1;
}

main().catch((err: unknown) => {
  if (err instanceof DatamoverUsageError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`bench:datamover failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
