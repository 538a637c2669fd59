/**
 * What the cluster projects' global setups share: start one local cluster per test run in a fresh run directory,
 * provide its connection info to the tests (`inject('cairnCluster')`, or clusterInfo() from ./cluster.ts) and always
 * tear it down. When a test failed, the run directory (every component's log) is kept and its path printed. With
 * CAIRN_TEST_CLUSTER_REUSE=1 the cluster in the default run directory of its runtime is used if healthy, or started
 * there, and left running for the next run (watch mode, quick iterations): `cairn` for real nodes (what
 * `npm run cluster:up` starts), `cairn-local` for the stand-in (`npm run cluster:up -- --runtime local --name cairn-local`),
 * or the name in CAIRN_TEST_CLUSTER_NAME.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { clusterHealth, down, signalClusterSync, up, type NodeRuntime } from '../../tools/local-cluster/cluster.js';
import { KUBELET_ROOT_DIR } from '../../tools/local-cluster/node/node-config.js';
import { cacheRoot, defaultRunDir } from '../../tools/local-cluster/paths.js';
import { isAlive } from '../../tools/local-cluster/processes.js';
import { readState, type ClusterState } from '../../tools/local-cluster/state.js';
import { setupToolchain } from '../../tools/local-cluster/toolchain.js';
import type { ClusterInfo } from './cluster-info.js';

const NODES = 2;
/**
 * How long the cluster may take to start: a hang, not a slow machine (a machine shared with other test runs has
 * taken three minutes for the API server alone; the set-up hook allows ten).
 */
const START_TIMEOUT_MS = 420_000;
const log = (line: string) => process.stderr.write(`[local-cluster] ${line}\n`);

/** The image the stand-in maps to this tree's code (any repository whose last segment is `cairn`). */
const STAND_IN_IMAGE = 'ghcr.io/cairn-backup/cairn:dev';
/** The kubelet stand-in keeps pods under `<node-root>/var/lib/kubelet`, and re-roots this hostPath there. */
const STAND_IN_KUBELET_ROOT_DIR = '/var/lib/kubelet';

export interface TestClusterOptions {
  runtime: NodeRuntime;
  /** Puts cairn's image where the nodes pull from; returns the reference to install. Real nodes only. */
  image?: (state: ClusterState) => Promise<string>;
}

export async function startTestCluster(project: TestProject, opts: TestClusterOptions): Promise<() => Promise<void>> {
  // containerd too: tests of real nodes (and the tiers that run on them) start such clusters.
  await setupToolchain(log, { nodes: true });
  if (process.env.CAIRN_TEST_CLUSTER_REUSE === '1') return reuse(project, opts);

  await stopOrphans();
  const parent = join(cacheRoot(), 'run');
  mkdirSync(parent, { recursive: true });
  const runDir = mkdtempSync(join(parent, 'test-'));
  // Whose cluster this is: a later run stops it if this process died without tearing it down.
  writeFileSync(join(runDir, OWNER_FILE), String(process.pid));
  const removeInterruptGuard = stopOnInterrupt(runDir);
  let info: ClusterInfo;
  try {
    const result = await up({ runDir, name: 'test', nodes: NODES, runtime: opts.runtime, log, timeoutMs: START_TIMEOUT_MS });
    log(`cluster up in ${result.seconds.toFixed(1)}s (${opts.runtime === 'containerd' ? 'real nodes' : 'kubelet stand-in'}); run dir ${runDir}`);
    info = await toInfo(result.state, opts);
  } catch (err) {
    removeInterruptGuard();
    log(`cluster failed to start; logs kept in ${join(runDir, 'logs')}`);
    await down({ runDir, keep: 'logs', graceMs: 3_000 }).catch(() => undefined);
    throw err;
  }
  project.provide('cairnCluster', info);

  return async () => {
    removeInterruptGuard();
    const failed = project.vitest.state.getCountOfFailedTests() > 0 || project.vitest.state.getFailedFilepaths().length > 0;
    // A failed run keeps the logs only: the cluster's data (etcd, MinIO, containerd's images and pods' volumes) is
    // gigabytes after an e2e run and explains nothing the logs do not.
    const result = await down({ runDir, keep: failed ? 'logs' : false });
    if (failed) log(`tests failed: cluster stopped, logs kept: ${runDir}/logs (pod logs under ${runDir}/nodes)`);
    else log(`cluster stopped (${result.stopped} processes), run dir removed`);
  };
}

async function reuse(project: TestProject, opts: TestClusterOptions): Promise<() => Promise<void>> {
  const name = process.env.CAIRN_TEST_CLUSTER_NAME || (opts.runtime === 'containerd' ? 'cairn' : 'cairn-local');
  const runDir = defaultRunDir(name);
  const existing = readState(runDir);
  let state: ClusterState;
  if (existing && (existing.runtime ?? 'local') === opts.runtime && (await clusterHealth(existing)).healthy) {
    log(`reusing the healthy cluster in ${runDir}`);
    state = existing;
  } else {
    state = (await up({ runDir, name, nodes: NODES, runtime: opts.runtime, log })).state;
    log(`cluster started in ${runDir}; left running (CAIRN_TEST_CLUSTER_REUSE=1), stop it with npm run cluster:down -- --name ${name}`);
  }
  project.provide('cairnCluster', await toInfo(state, opts));
  return async () => {
    log(`cluster left running in ${runDir} (logs in ${runDir}/logs)`);
  };
}

async function toInfo(state: ClusterState, opts: TestClusterOptions): Promise<ClusterInfo> {
  const real = state.runtime === 'containerd';
  return {
    kubeconfigPath: state.kubeconfigPath,
    apiServerUrl: state.apiServerUrl,
    caFile: state.pki.caCert,
    runDir: state.runDir,
    kubectlPath: state.binaries.kubectl,
    s3: { ...state.s3 },
    registry: { ...state.registry },
    nodes: state.nodes.map((n) => ({ name: n.name, ip: n.ip, rootDir: n.rootDir })),
    runtime: real ? 'containerd' : 'local',
    kubeletRootDir: real ? KUBELET_ROOT_DIR : STAND_IN_KUBELET_ROOT_DIR,
    image: real && opts.image ? await opts.image(state) : STAND_IN_IMAGE,
  };
}

const OWNER_FILE = 'owner.pid';

/**
 * An interrupted run (Ctrl-C) exits without calling the teardown: signal the cluster's processes on the way
 * out so they do not outlive it. Returns the function that removes the guard (normal teardown).
 */
function stopOnInterrupt(runDir: string): () => void {
  const onExit = () => {
    if (signalClusterSync(runDir) > 0) log(`run interrupted: stopping the cluster; logs kept in ${runDir}/logs`);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    onExit();
    process.removeListener(signal, onSignal);
    // Without another listener the signal's default action (exit) would have run: re-raise it.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.once('exit', onExit);
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  return () => {
    process.removeListener('exit', onExit);
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(s, onSignal);
  };
}

/** How long run directories of failed or interrupted test runs are kept for their logs. */
const KEEP_FINISHED_RUN_DIRS_MS = 24 * 3600_000;

/**
 * Stops clusters of earlier test runs that were killed before their teardown, and deletes the run directories
 * earlier runs kept once they are a day old (a run dir holds etcd and MinIO data; they would pile up otherwise).
 */
async function stopOrphans(): Promise<void> {
  const parent = join(cacheRoot(), 'run');
  if (!existsSync(parent)) return;
  const finished: { dir: string; mtimeMs: number }[] = [];
  for (const entry of readdirSync(parent)) {
    if (!entry.startsWith('test-')) continue;
    const dir = join(parent, entry);
    const ownerFile = join(dir, OWNER_FILE);
    try {
      if (!existsSync(ownerFile)) continue;
      const owner = Number(readFileSync(ownerFile, 'utf8').trim());
      if (owner > 0 && isAlive(owner)) continue;
      const result = await down({ runDir: dir, keep: 'logs', graceMs: 3_000 });
      if (result.stopped > 0) log(`stopped ${result.stopped} leftover processes of an interrupted test run (${dir})`);
      finished.push({ dir, mtimeMs: statSync(ownerFile).mtimeMs });
    } catch (err) {
      // Another test run on this machine may be removing the same directory right now; housekeeping never fails a run.
      log(`skipped ${dir}: ${(err as Error).message}`);
    }
  }
  for (const { dir } of finished.filter((f) => Date.now() - f.mtimeMs > KEEP_FINISHED_RUN_DIRS_MS)) {
    // Housekeeping must never fail a test run: report and carry on.
    await down({ runDir: dir, keep: false, graceMs: 3_000 }).catch((err: unknown) => log(`could not remove ${dir}: ${String(err)}`));
  }
}
