// `npm run bench:scale [-- options]`: the control plane at scale. Creates N namespaces of small objects on a local
// cluster, then backs them all up and restores a part of them (under new names) through cairn's server and the real
// Velero server side by side, one step at a time; prints each one's time, items per second, the time from create to
// InProgress, and each server's peak RSS per step and idle RSS before and after. Progress goes to stderr; the report
// to stdout and to bench/results/scale-<date>.json. See docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { connect, type Kube } from '../src/kube/client.js';
import { cacheRoot } from '../tools/local-cluster/paths.js';
import { ensureToolBinary } from '../tools/local-cluster/toolchain.js';
import { buildIfMissing, ClusterHarness, clusterFor, log, must, projectRoot } from './cluster/harness.js';
import { parseScaleArgs, SCALE_USAGE, ScaleUsageError, type ScaleArgs } from './scale/args.js';
import { ITEMS_PER_NAMESPACE, namespaceNames, populate } from './scale/populate.js';
import { renderScaleReport, type ScaleReport, type ScaleStep, type ServerStep } from './scale/report.js';
import { cairnServerPid, rssBytes, sampleRss } from './scale/rss.js';
import { startVeleroServer, type VeleroServer } from './scale/velero-server.js';

const CAIRN_NS = 'cairn-bench-scale';
const VELERO_NS = 'velero-bench-scale';
const STEP_TIMEOUT_MS = 30 * 60_000;
const POLL_MS = 100;
/** How long the servers rest before their idle RSS is read. */
const SETTLE_MS = 30_000;
const TERMINAL = new Set(['Completed', 'PartiallyFailed', 'Failed', 'FailedValidation']);

interface Server {
  name: 'cairn' | 'velero';
  namespace: string;
  pid: () => number | undefined;
}

function veleroBinary(): string {
  return execFileSync('bash', [resolve(projectRoot, 'tools/peers/install-velero.sh')], { encoding: 'utf8', timeout: 1_800_000, stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1) ?? '';
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Creates a Backup or Restore in the server's namespace and follows it to its end, sampling the server's RSS. */
async function runStep(k: Kube, server: Server, plural: 'backups' | 'restores', name: string, spec: object): Promise<ServerStep> {
  const rss = sampleRss(server.pid);
  const started = performance.now();
  await k.custom.createNamespacedCustomObject({ group: 'velero.io', version: 'v1', namespace: server.namespace, plural, body: { apiVersion: 'velero.io/v1', kind: plural === 'backups' ? 'Backup' : 'Restore', metadata: { name }, spec } });
  let startSeconds: number | undefined;
  for (;;) {
    const obj = (await k.custom.getNamespacedCustomObject({ group: 'velero.io', version: 'v1', namespace: server.namespace, plural, name })) as { status?: { phase?: string; progress?: { itemsBackedUp?: number; itemsRestored?: number } } };
    const phase = obj.status?.phase ?? '';
    const seconds = (performance.now() - started) / 1000;
    if (phase !== '' && phase !== 'New' && startSeconds === undefined) startSeconds = seconds;
    if (TERMINAL.has(phase)) {
      const items = (plural === 'backups' ? obj.status?.progress?.itemsBackedUp : obj.status?.progress?.itemsRestored) ?? 0;
      return { phase, seconds, startSeconds, items, peakRssBytes: rss.stop() };
    }
    if (seconds * 1000 > STEP_TIMEOUT_MS) throw new Error(`${server.name} ${plural} ${name} did not end within ${STEP_TIMEOUT_MS / 60_000} min (phase ${phase || 'none'})`);
    await sleep(POLL_MS);
  }
}

async function idleRss(servers: Server[]): Promise<Record<string, number>> {
  await sleep(SETTLE_MS);
  return Object.fromEntries(servers.map((s) => [s.name, rssBytes(s.pid() ?? -1) ?? 0]));
}

/** Restored namespaces: `rc-RUN-…` (cairn) and `rv-RUN-…` (Velero); any run's when `run` is left out. */
async function restoredNamespaces(k: Kube, run = ''): Promise<string[]> {
  const list = await k.core.listNamespace();
  return list.items.map((n) => n.metadata?.name ?? '').filter((n) => /^r[cv]-/.test(n) && n.slice(3).startsWith(run));
}

/**
 * On a kept cluster, waits until an earlier run's restored namespaces are gone: the API server deletes thousands of
 * objects while they terminate, and a restore measured meanwhile took twice as long.
 */
async function waitForEarlierRestoresGone(k: Kube): Promise<void> {
  const deadline = Date.now() + 15 * 60_000;
  for (let left = await restoredNamespaces(k); left.length > 0; left = await restoredNamespaces(k)) {
    if (Date.now() > deadline) throw new Error(`${left.length} namespaces of an earlier run are still being deleted after 15 minutes`);
    log(`waiting for ${left.length} restored namespaces of an earlier run to be deleted ...`);
    await sleep(5_000);
  }
}

async function bench(args: ScaleArgs): Promise<ScaleReport> {
  const velero = args.velero ? veleroBinary() : undefined;
  const awsPlugin = args.velero ? await ensureToolBinary('veleroPluginForAws', log) : undefined;
  await buildIfMissing('server');
  const { state, stop } = await clusterFor({ reuse: args.reuse, keep: args.keep, name: 'bench-scale', nodes: 1 });
  const scratch = mkdtempSync(join(cacheRoot(), 'bench-scale-'));
  const k = connect({ kubeconfig: state.kubeconfigPath });
  const h = new ClusterHarness(state, CAIRN_NS);
  const names = namespaceNames(args.namespaces);
  const restored = names.slice(0, args.restoreNamespaces);
  const run = Date.now().toString(36);
  let veleroServer: VeleroServer | undefined;
  try {
    if (args.reuse) await waitForEarlierRestoresGone(k);
    log(`creating ${names.length} namespaces with ${ITEMS_PER_NAMESPACE} objects each ...`);
    const t = performance.now();
    await populate(k, names, (done) => log(`  ${done} namespaces`));
    log(`populated in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    await h.install({ prefix: `cairn-scale-${run}`, scratchDir: scratch });
    if (args.serverEnv.length > 0) {
      must('set the server environment', await h.kubectl(['set', 'env', 'deployment/cairn', '-n', CAIRN_NS, ...args.serverEnv]));
      must('rollout', await h.kubectl(['rollout', 'status', 'deployment/cairn', '-n', CAIRN_NS, '--timeout=5m']));
      log(`cairn's server runs with ${args.serverEnv.join(' ')}`);
    }
    const servers: Server[] = [{ name: 'cairn', namespace: CAIRN_NS, pid: () => cairnServerPid(CAIRN_NS) }];
    if (velero && awsPlugin) {
      log('starting the Velero server ...');
      veleroServer = await startVeleroServer({ velero, awsPlugin, state, h, namespace: VELERO_NS, prefix: `velero-scale-${run}`, scratch });
      const pid = veleroServer.pid;
      servers.push({ name: 'velero', namespace: VELERO_NS, pid: () => pid });
    }
    const before = await idleRss(servers);
    const steps: ScaleStep[] = [];
    const step = async (name: string, perform: (s: Server) => Promise<ServerStep>): Promise<void> => {
      const results: Partial<Record<Server['name'], ServerStep>> = {};
      for (const s of servers) {
        log(`${name}: ${s.name} ...`);
        results[s.name] = await perform(s);
        log(`  ${results[s.name]!.phase} in ${results[s.name]!.seconds.toFixed(1)} s, ${results[s.name]!.items} items`);
      }
      steps.push({ name, cairn: results.cairn!, ...(results.velero ? { velero: results.velero } : {}) });
    };
    const backup = `scale-${run}`;
    await step(`backup of ${names.length} namespaces`, (s) => runStep(k, s, 'backups', backup, { includedNamespaces: names, snapshotVolumes: false }));
    await step(`restore of ${restored.length} of them`, (s) =>
      runStep(k, s, 'restores', `${backup}-part`, { backupName: backup, includedNamespaces: restored, namespaceMapping: Object.fromEntries(restored.map((n) => [n, `${s.name === 'cairn' ? 'rc' : 'rv'}-${run}-${n.slice(6)}`])) }),
    );
    const after = await idleRss(servers);
    return {
      title: `Control plane at scale: ${names.length} namespaces x ${ITEMS_PER_NAMESPACE} objects, restore of ${restored.length} (${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(1)} at the end${args.serverEnv.length > 0 ? `; cairn's server with ${args.serverEnv.join(' ')}` : ''})`,
      steps,
      idle: { cairn: { before: before.cairn ?? 0, after: after.cairn ?? 0 }, ...(veleroServer ? { velero: { before: before.velero ?? 0, after: after.velero ?? 0 } } : {}) },
    };
  } finally {
    await veleroServer?.stop();
    if (args.reuse) {
      // What a run adds to a kept cluster: the restored namespaces (the source ones are kept for the next run).
      for (const ns of await restoredNamespaces(k, `${run}-`)) await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
    if (args.keep) log(`the Velero server's log and the bench's files are kept in ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
    await stop();
  }
}

async function main(): Promise<void> {
  let args: ScaleArgs;
  try {
    args = parseScaleArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof ScaleUsageError) {
      process.stderr.write(`${err.message}\n\n${SCALE_USAGE}`);
      process.exit(2);
    }
    throw err;
  }
  if (args.help) {
    process.stdout.write(SCALE_USAGE);
    return;
  }
  const report = await bench(args);
  process.stdout.write(renderScaleReport(report));
  const dir = join(projectRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `scale-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  log(`report written to ${file}`);
}

await main();
