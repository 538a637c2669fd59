// The README's test command (`npm test`) and therefore CI's: toolchain set-up, build, manifest check, lint, type
// check, then the unit, integration and e2e tiers (docs/testing.md). Prints each stage's time as it ends and all of them at the
// end. Fails on any failing or skipped test. Arguments after `--` go to every vitest run (e.g. a file filter).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runProject } from './test-shards.mjs';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'inherit', ...opts });
const times = [];
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
  process.stdout.write(`  ${'total'.padEnd(width)}  ${seconds(total).padStart(8)}\n`);
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
  // alongside the others on a cold machine (cached afterwards).
  stage('toolchain (built once, cached under ~/.cache/cairn)', () => run('node', ['--import', 'tsx', 'tools/local-cluster/cli.ts', 'setup', '--all']));

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

  // `npm run lint` is these two stages; they run apart here so that each one's time shows.
  stage('lint (eslint)', () => run('eslint', ['.']));
  stage('type check (tsc)', () => run('tsc', ['-p', 'tsconfig.json']));

  const extra = process.argv.slice(2);
  const totals = { passed: 0, failed: 0, skipped: 0, total: 0 };
  /** One vitest project; adds its counts to the totals and fails the run when vitest does. */
  function tier(project) {
    const report = join(mkdtempSync(join(tmpdir(), 'cairn-test-')), 'report.json');
    const args = ['run', '--project', project, '--passWithNoTests', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra];
    const vitest = spawnSync('vitest', args, { stdio: 'inherit' });
    let summary;
    try {
      summary = JSON.parse(readFileSync(report, 'utf8'));
    } catch {
      fail(`vitest wrote no report for the ${project} tests`, vitest.status || 1);
    }
    totals.passed += summary.numPassedTests;
    totals.failed += summary.numFailedTests;
    totals.skipped += (summary.numPendingTests ?? 0) + (summary.numTodoTests ?? 0);
    totals.total += summary.numTotalTests;
    if (vitest.status !== 0 || summary.numFailedTests > 0) fail(`${project} tests failed`, vitest.status || 1);
  }
  stage('unit tests', () => tier('unit'));
  // The cluster tiers side by side (scripts/test-shards.mjs): they mostly wait on controllers, pods and the object
  // store, so two cores run several clusters at once. The integration tier (and the e2e files still on the stand-in)
  // is shared out over stand-in clusters, the e2e tier runs on one cluster of real nodes beside them. CAIRN_TEST_SHARDS
  // counts every cluster; 1 runs one tier after the other, one file at a time. Two by default: one stand-in cluster and
  // the real nodes. Stand-in containers see the host's file system, and restore-wait's mount points under /restores
  // are the host's, so a restore on one stand-in cluster holds the pods of a restore on another in Init (the hooks e2e
  // timed out so beside fs-backup-workloads); more stand-in clusters wait for the restore e2e files to move onto real
  // nodes.
  const shards = Number(process.env.CAIRN_TEST_SHARDS ?? 2);
  const standIn = Math.max(1, shards - 1);
  await stageAsync(`cluster tests (integration on ${standIn} stand-in cluster${standIn > 1 ? 's' : ''}, e2e on real nodes${shards > 1 ? ', side by side' : ''})`, async () => {
    const timed = async (project, n) => {
      const started = performance.now();
      const result = await runProject(project, n, extra, { label: project });
      process.stdout.write(`== ${project} tier: ${seconds(performance.now() - started)}\n`);
      return result;
    };
    const results = shards > 1 ? await Promise.all([timed('cluster', standIn), timed('e2e', 1)]) : [await timed('cluster', 1), await timed('e2e', 1)];
    for (const result of results) for (const key of ['passed', 'failed', 'skipped', 'total']) totals[key] += result[key];
    const missing = results.flatMap((r) => r.missing);
    if (missing.length > 0) fail(`vitest wrote no report for: ${missing.join(', ')}`);
    if (!results.every((r) => r.ok)) fail('cluster tests failed');
  });

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
