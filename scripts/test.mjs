// The README's test command (`npm test`) and therefore CI's: toolchain set-up, build, manifest check, image, then
// lint, type check and the unit tier one after another beside the cluster tiers (integration and e2e; docs/testing.md).
// Prints each stage's time as it ends, all of them and the run's wall time at the end. Fails on any failing or skipped test. Arguments after `--` go to every vitest run (e.g. a file filter).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runProject, stopShards } from './test-shards.mjs';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';

/** TypeScript 7's compiler, by path: TypeScript 6 (which typescript-eslint needs) installs a `tsc` too. */
const TSC = join('node_modules', 'typescript-7', 'bin', 'tsc');
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'inherit', ...opts });
const times = [];
const startedAt = performance.now();

/**
 * Runs a command with this terminal as its output without blocking the event loop (the cluster stage's shards stream
 * through it meanwhile); resolves to its exit status. SIGINT/SIGTERM/SIGHUP are passed on to it.
 */
function runAsync(cmd, args) {
  const child = spawn(cmd, args, { stdio: 'inherit' });
  const relay = (signal) => {
    if (child.exitCode === null) child.kill(signal);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, relay);
  return new Promise((resolve) =>
    child.once('close', (code, signal) => {
      for (const s of signals) process.removeListener(s, relay);
      resolve(code ?? (signal ? 1 : 0));
    }),
  );
}
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Runs one stage, printing its title before and its time after. */
function stage(title, fn) {
  process.stdout.write(`\n== ${title}\n`);
  const start = performance.now();
  try {
    return fn();
  } finally {
    const ms = performance.now() - start;
    times.push([title, ms]);
    process.stdout.write(`== ${title}: ${seconds(ms)}\n`);
  }
}

/** stage() for work that awaits. */
async function stageAsync(title, fn) {
  process.stdout.write(`\n== ${title}\n`);
  const start = performance.now();
  try {
    return await fn();
  } finally {
    const ms = performance.now() - start;
    times.push([title, ms]);
    process.stdout.write(`== ${title}: ${seconds(ms)}\n`);
  }
}

function printTimes() {
  const width = Math.max(...times.map(([t]) => t.length));
  process.stdout.write('\nstage times:\n');
  for (const [title, ms] of times) process.stdout.write(`  ${title.padEnd(width)}  ${seconds(ms).padStart(8)}\n`);
  const total = times.reduce((n, [, ms]) => n + ms, 0);
  process.stdout.write(`  ${'sum of stages'.padEnd(width)}  ${seconds(total).padStart(8)}\n`);
  // Lint, type check and unit tests run beside the cluster stage, so the run takes less than the sum.
  process.stdout.write(`  ${'wall time'.padEnd(width)}  ${seconds(performance.now() - startedAt).padStart(8)}\n`);
}

/** Stops the run: the stage under way still gets its time, then all times print and the process exits. */
class Failure extends Error {
  constructor(message, code = 1) {
    super(message);
    this.code = code;
  }
}
function fail(message, code = 1) {
  throw new Failure(message, code);
}

if (!process.versions.node.startsWith('24.')) {
  console.error(`npm scripts must run on the bundled Node.js 24 (got ${process.versions.node}); run 'npm ci' first`);
  process.exit(1);
}

try {
  // --all: the CSI test bed's binaries, containerd (real nodes) and the tools single tests use (helm) build
  // alongside the others on a cold machine (cached afterwards). Then the kopia Velero bundles, which the tests use to
  // make Velero's repositories: built inside the first test that asked for it, its minutes on a cold machine ran
  // past that test's time limit.
  stage('toolchain (built once, cached under ~/.cache/cairn)', () => {
    run('node', ['--import', 'tsx', 'tools/local-cluster/cli.ts', 'setup', '--all']);
    run('bash', ['tools/peers/install-kopia.sh', '--velero'], { stdio: ['ignore', 'ignore', 'inherit'] });
  });

  stage('build', () => {
    run('npm', ['run', '--silent', 'build']);
    const manifestDiff = spawnSync('git', ['diff', '--exit-code', '--stat', '--', 'oclif.manifest.json'], { stdio: 'inherit' });
    if (manifestDiff.status !== 0) {
      console.error('oclif.manifest.json is stale: run `npm run build` and commit it');
      if (process.env.CI) fail();
    }
  });

  // cairn's image (buildah, layers cached: seconds when nothing changed); the image tests and real nodes run it.
  stage('image (npm run image)', () => run('node', ['--import', 'tsx', 'tools/image/cli.ts']));

  const extra = process.argv.slice(2);
  const totals = { passed: 0, failed: 0, skipped: 0, total: 0 };

  // The cluster tiers side by side (scripts/test-shards.mjs): they mostly wait on controllers, pods and the object
  // store, so two cores run several clusters at once. The integration tier (and the image test) is shared out over
  // stand-in clusters, the e2e tier over clusters of real nodes beside them. CAIRN_TEST_SHARDS counts every cluster:
  // four by default (two stand-in, two of real nodes; from four on, two are stand-in, below it one); 1 runs one tier
  // after the other, one file at a time.
  const shards = Number(process.env.CAIRN_TEST_SHARDS ?? 4);
  const standIn = shards >= 4 ? 2 : 1;
  const realNodes = Math.max(1, shards - standIn);
  const clusterStage = () =>
    stageAsync(`cluster tests (integration on ${standIn} stand-in cluster${standIn > 1 ? 's' : ''}, e2e on ${realNodes} cluster${realNodes > 1 ? 's' : ''} of real nodes${shards > 1 ? ', side by side' : ''})`, async () => {
      const timed = async (project, n) => {
        const started = performance.now();
        const result = await runProject(project, n, extra, { label: project });
        process.stdout.write(`== ${project} tier: ${seconds(performance.now() - started)}\n`);
        return result;
      };
      const results = shards > 1 ? await Promise.all([timed('cluster', standIn), timed('e2e', realNodes)]) : [await timed('cluster', 1), await timed('e2e', 1)];
      for (const result of results) for (const key of ['passed', 'failed', 'skipped', 'total']) totals[key] += result[key];
      const missing = results.flatMap((r) => r.missing);
      if (missing.length > 0) fail(`vitest wrote no report for: ${missing.join(', ')}`);
      const empty = results.flatMap((r) => r.empty);
      if (empty.length > 0) fail(`ran no test (did its cluster start?): ${empty.join(', ')}`);
      if (!results.every((r) => r.ok)) fail('cluster tests failed');
    });

  /**
   * One tier's vitest projects (a name or a wildcard) in this process's terminal; adds its counts to the totals and
   * fails when vitest does.
   */
  async function tier(project) {
    const report = join(mkdtempSync(join(tmpdir(), 'cairn-test-')), 'report.json');
    const args = ['run', '--project', project, '--passWithNoTests', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra];
    const status = await runAsync('vitest', args);
    let summary;
    try {
      summary = JSON.parse(readFileSync(report, 'utf8'));
    } catch {
      fail(`vitest wrote no report for the ${project} tests`, status || 1);
    }
    totals.passed += summary.numPassedTests;
    totals.failed += summary.numFailedTests;
    totals.skipped += (summary.numPendingTests ?? 0) + (summary.numTodoTests ?? 0);
    totals.total += summary.numTotalTests;
    if (status !== 0 || summary.numFailedTests > 0) fail(`${project} tests failed`, status || 1);
  }
  /** A command as a stage of its own; fails the run with the command's exit status. */
  async function command(cmd, args) {
    const status = await runAsync(cmd, args);
    if (status !== 0) fail(`${cmd} ${args.join(' ')} failed`, status);
  }

  // The cluster stage starts now and runs beside lint, type check and unit tests: its clusters spend most of their time
  // waiting, and those three stages keep the cores busy meanwhile (the run's wall time is printed with the stages').
  // CAIRN_TEST_OVERLAP=0 runs the stages one after another. A failing stage stops the cluster stage's shards (their
  // global setups stop their clusters) before the run ends.
  const overlap = process.env.CAIRN_TEST_OVERLAP !== '0';
  const clusters = overlap ? clusterStage() : undefined;
  clusters?.catch(() => {});
  try {
    // `npm run lint` is these two stages; they run apart here so that each one's time shows.
    await stageAsync('lint (eslint)', () => command('eslint', ['.']));
    // TypeScript 7's compiler (native; a fourth of TypeScript 6's time). typescript-eslint still needs TypeScript 6.
    await stageAsync('type check (tsc)', () => command(process.execPath, [TSC, '-p', 'tsconfig.json']));
    // 'unit*': the unit project, whose files share their workers, and the few files that need a process of their own.
    await stageAsync('unit tests', () => tier('unit*'));
  } catch (err) {
    if (clusters) {
      stopShards();
      await clusters.catch(() => {});
    }
    throw err;
  }
  await (clusters ?? clusterStage());

  console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
  if (totals.skipped > 0) fail('skipped tests are not allowed');
  if (totals.total === 0) fail('no test ran');
} catch (err) {
  if (!(err instanceof Failure) && !err?.status) throw err;
  if (err.message && err instanceof Failure) console.error(err.message);
  printTimes();
  process.exit(err instanceof Failure ? err.code : err.status);
}
printTimes();
