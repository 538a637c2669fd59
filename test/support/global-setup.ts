/**
 * vitest globalSetup of the "cluster" project: starts one local cluster per test run in a fresh run directory,
 * provides its connection info to the tests (`inject('cairnCluster')`, or clusterInfo() from ./cluster.ts) and
 * always tears it down. When a test failed, the run directory (every component's log) is kept and its path
 * printed. With CAIRN_TEST_CLUSTER_REUSE=1 the cluster in the default run directory (`npm run cluster:up`) is
 * used if healthy, or started there, and left running for the next run (watch mode, quick iterations).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { clusterHealth, down, signalClusterSync, up } from '../../tools/local-cluster/cluster.js';
import { cacheRoot, defaultRunDir } from '../../tools/local-cluster/paths.js';
import { isAlive } from '../../tools/local-cluster/processes.js';
import { readState, type ClusterState } from '../../tools/local-cluster/state.js';
import { setupToolchain } from '../../tools/local-cluster/toolchain.js';
import type { ClusterInfo } from './cluster-info.js';

const NODES = 2;
const log = (line: string) => process.stderr.write(`[local-cluster] ${line}\n`);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // containerd too: tests of real nodes (and the tiers that run on them) start such clusters.
  await setupToolchain(log, { nodes: true });
  if (process.env.CAIRN_TEST_CLUSTER_REUSE === '1') return reuse(project);

  await stopOrphans();
  const parent = join(cacheRoot(), 'run');
  mkdirSync(parent, { recursive: true });
  const runDir = mkdtempSync(join(parent, 'test-'));
  // Whose cluster this is: a later run stops it if this process died without tearing it down.
  writeFileSync(join(runDir, OWNER_FILE), String(process.pid));
  let state: ClusterState;
  try {
    const result = await up({ runDir, name: 'test', nodes: NODES, log });
    state = result.state;
    log(`cluster up in ${result.seconds.toFixed(1)}s; run dir ${runDir}`);
  } catch (err) {
    log(`cluster failed to start; logs kept in ${join(runDir, 'logs')}`);
    throw err;
  }
  project.provide('cairnCluster', toInfo(state));
  const removeInterruptGuard = stopOnInterrupt(runDir);

  return async () => {
    removeInterruptGuard();
    const failed = project.vitest.state.getCountOfFailedTests() > 0 || project.vitest.state.getFailedFilepaths().length > 0;
    const result = await down({ runDir, keep: failed });
    if (failed) log(`tests failed: cluster stopped, run dir kept for its logs: ${runDir}/logs`);
    else log(`cluster stopped (${result.stopped} processes), run dir removed`);
  };
}

async function reuse(project: TestProject): Promise<() => Promise<void>> {
  const runDir = defaultRunDir('cairn');
  const existing = readState(runDir);
  let state: ClusterState;
  if (existing && (await clusterHealth(existing)).healthy) {
    log(`reusing the healthy cluster in ${runDir}`);
    state = existing;
  } else {
    state = (await up({ runDir, name: 'cairn', nodes: NODES, log })).state;
    log(`cluster started in ${runDir}; left running (CAIRN_TEST_CLUSTER_REUSE=1), stop it with npm run cluster:down`);
  }
  project.provide('cairnCluster', toInfo(state));
  return async () => {
    log(`cluster left running in ${runDir} (logs in ${runDir}/logs)`);
  };
}

function toInfo(state: ClusterState): ClusterInfo {
  return {
    kubeconfigPath: state.kubeconfigPath,
    apiServerUrl: state.apiServerUrl,
    caFile: state.pki.caCert,
    runDir: state.runDir,
    kubectlPath: state.binaries.kubectl,
    s3: { ...state.s3 },
    registry: { ...state.registry },
    nodes: state.nodes.map((n) => ({ name: n.name, ip: n.ip, rootDir: n.rootDir })),
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
      const result = await down({ runDir: dir, keep: true, graceMs: 3_000 });
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
