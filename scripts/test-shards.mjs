// Runs one vitest project as several vitest processes side by side, each on its own share of the test files and
// therefore on its own local cluster (the project's global setup starts one per process). The cluster tests mostly
// wait on controllers, pods and the object store, so two cores run several of them at once: the tier's wall time is
// the longest shard's, not the sum. Files are shared out by their durations in earlier runs (kept under the cache
// directory), longest first onto the least loaded shard.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';

const timingsFile = () => join(process.env.CAIRN_CACHE_DIR ?? join(homedir(), '.cache', 'cairn'), 'test-timings.json');

function readTimings() {
  try {
    return JSON.parse(readFileSync(timingsFile(), 'utf8'));
  } catch {
    return {};
  }
}

function saveTimings(update) {
  const file = timingsFile();
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...readTimings(), ...update }, null, 2)}\n`);
}

/** The project's test files, relative to the working directory, as vitest resolves its include patterns. */
export function listFiles(project) {
  const listed = spawnSync('vitest', ['list', '--project', project, '--filesOnly', '--json'], { encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`vitest list --project ${project} failed: ${listed.stderr}`);
  return JSON.parse(listed.stdout).map((entry) => relative(process.cwd(), entry.file)).sort();
}

/** Longest-first onto the least loaded shard; a file never timed counts as the median of those that were. */
export function shareOut(files, shards, timings) {
  const known = files.map((f) => timings[f]).filter((s) => typeof s === 'number').sort((a, b) => a - b);
  const fallback = known.length ? known[Math.floor(known.length / 2)] : 1;
  const weighted = files.map((file) => ({ file, seconds: timings[file] ?? fallback }));
  weighted.sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
  const bins = Array.from({ length: Math.max(1, Math.min(shards, files.length)) }, () => ({ files: [], seconds: 0 }));
  for (const { file, seconds } of weighted) {
    const bin = bins.reduce((least, b) => (b.seconds < least.seconds ? b : least));
    bin.files.push(file);
    bin.seconds += seconds;
  }
  return bins;
}

/** Streams a child's output line by line with a prefix, so that shards running together stay readable. */
function prefixed(stream, out, prefix) {
  const lines = createInterface({ input: stream });
  lines.on('line', (line) => out.write(`${prefix}${line}\n`));
  return new Promise((resolve) => lines.once('close', resolve));
}

/**
 * Passes SIGINT/SIGTERM/SIGHUP on to a shard, so that stopping `npm test` (a CI timeout, `kill`) stops every
 * vitest process and, through their global setups, every cluster. Returns the function that removes the relay.
 */
function forwardSignals(child) {
  const relay = (signal) => {
    if (child.exitCode === null) child.kill(signal);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, relay);
  return () => {
    for (const s of signals) process.removeListener(s, relay);
  };
}

/** Shards still running: stopShards() ends them when another stage of `npm test` has failed. */
const running = new Set();

/** Sends every running shard SIGTERM; their global setups stop their clusters before they exit. */
export function stopShards() {
  for (const child of running) if (child.exitCode === null) child.kill('SIGTERM');
}

/** Runs one vitest process on the given files; resolves to its exit status and JSON report (if it wrote one). */
async function runShard(project, label, files, extraArgs) {
  const report = join(mkdtempSync(join(tmpdir(), 'cairn-test-')), 'report.json');
  const args = ['run', '--project', project, '--passWithNoTests', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extraArgs, ...files];
  const child = spawn('vitest', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } });
  const forget = forwardSignals(child);
  running.add(child);
  const prefix = label ? `[${label}] ` : '';
  const drained = Promise.all([prefixed(child.stdout, process.stdout, prefix), prefixed(child.stderr, process.stderr, prefix)]);
  const status = await new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  forget();
  running.delete(child);
  await drained;
  const summary = existsSync(report) ? JSON.parse(readFileSync(report, 'utf8')) : undefined;
  return { label, status, summary };
}

/**
 * How one vitest process ended: 'passed', 'failed', 'no report' (it wrote none), or 'ran no test'. --passWithNoTests
 * lets a typed filter match nothing in one project; without a filter, a shard that ran no test had its files dropped
 * (vitest does so when its global setup fails, and still exits 0), so that is a failure too.
 */
export function shardVerdict(status, summary, filtered) {
  if (!summary) return 'no report';
  if (status !== 0 || summary.numFailedTests > 0) return 'failed';
  if (!filtered && summary.numTotalTests === 0) return 'ran no test';
  return 'passed';
}

/**
 * Each file's share of a shard's wall time. The report's start time of a file comes after its imports and
 * `beforeAll` hooks, so a file is timed from the end of the file before it (files of a shard run one at a time).
 */
function fileDurations(summary) {
  const files = (summary.testResults ?? []).filter((f) => typeof f.endTime === 'number').sort((a, b) => a.endTime - b.endTime);
  const durations = {};
  let previousEnd = summary.startTime;
  for (const file of files) {
    durations[relative(process.cwd(), file.name)] = Math.round((file.endTime - (previousEnd ?? file.startTime)) / 100) / 10;
    previousEnd = file.endTime;
  }
  return durations;
}

/**
 * Runs a vitest project in `shards` processes (one when arguments filter the files, so the filter applies as
 * typed); `opts.label` prefixes a single process's output as well. Resolves to the combined counts and whether every shard passed; records each file's duration for the
 * next run's sharing out.
 */
export async function runProject(project, shards, extraArgs, opts = {}) {
  // A reused cluster (CAIRN_TEST_CLUSTER_REUSE=1) is one cluster: its files run one at a time.
  const single = extraArgs.length > 0 || shards <= 1 || process.env.CAIRN_TEST_CLUSTER_REUSE === '1';
  const plan = single ? [{ files: [], seconds: 0 }] : shareOut(listFiles(project), shards, readTimings());
  if (plan.length > 1) {
    plan.forEach((bin, i) => process.stdout.write(`[${project} ${i + 1}/${plan.length}] ${bin.files.length} files, about ${Math.round(bin.seconds)} s by earlier runs\n`));
  }
  // One shard's output is prefixed too when another project runs beside it (opts.label).
  const results = await Promise.all(plan.map((bin, i) => runShard(project, plan.length > 1 ? `${project} ${i + 1}/${plan.length}` : (opts.label ?? ''), bin.files, extraArgs)));
  const totals = { passed: 0, failed: 0, skipped: 0, total: 0, ok: true, missing: [], empty: [] };
  const durations = {};
  for (const { label, status, summary } of results) {
    const verdict = shardVerdict(status, summary, extraArgs.length > 0);
    if (verdict !== 'passed') totals.ok = false;
    if (verdict === 'no report') totals.missing.push(label || project);
    if (verdict === 'ran no test') totals.empty.push(label || project);
    if (!summary) continue;
    totals.passed += summary.numPassedTests;
    totals.failed += summary.numFailedTests;
    totals.skipped += (summary.numPendingTests ?? 0) + (summary.numTodoTests ?? 0);
    totals.total += summary.numTotalTests;
    Object.assign(durations, fileDurations(summary));
  }
  if (Object.keys(durations).length > 0) saveTimings(durations);
  return totals;
}
