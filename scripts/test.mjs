// The README's test command (`npm test`) and therefore CI's: toolchain set-up, build, manifest check, lint,
// type check, then every test tier. Fails on any failing or skipped test.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const step = (title) => process.stdout.write(`\n== ${title}\n`);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'inherit', ...opts });

if (!process.versions.node.startsWith('24.')) {
  console.error(`npm scripts must run on the bundled Node.js 24 (got ${process.versions.node}); run 'npm ci' first`);
  process.exit(1);
}

step('local cluster toolchain (built once, cached under ~/.cache/cairn)');
// --csi and --runtime containerd: the CSI test bed's binaries and containerd (real nodes) build alongside the
// others on a cold machine (cached afterwards).
run('node', ['--import', 'tsx', 'tools/local-cluster/cli.ts', 'setup', '--csi', '--runtime', 'containerd']);

step('build');
run('npm', ['run', '--silent', 'build']);
const manifestDiff = spawnSync('git', ['diff', '--exit-code', '--stat', '--', 'oclif.manifest.json'], { stdio: 'inherit' });
if (manifestDiff.status !== 0) {
  console.error('oclif.manifest.json is stale: run `npm run build` and commit it');
  if (process.env.CI) process.exit(1);
}

step('lint and type check');
run('npm', ['run', '--silent', 'lint']);

step('tests');
const report = join(mkdtempSync(join(tmpdir(), 'cairn-test-')), 'report.json');
const extra = process.argv.slice(2);
const vitest = spawnSync('vitest', ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra], { stdio: 'inherit' });
let summary;
try {
  summary = JSON.parse(readFileSync(report, 'utf8'));
} catch {
  console.error('vitest wrote no report');
  process.exit(vitest.status || 1);
}
const skipped = (summary.numPendingTests ?? 0) + (summary.numTodoTests ?? 0);
console.log(`${summary.numPassedTests} passed, ${summary.numFailedTests} failed, ${skipped} skipped`);
if (vitest.status !== 0 || summary.numFailedTests > 0) process.exit(vitest.status || 1);
if (skipped > 0) {
  console.error('skipped tests are not allowed');
  process.exit(1);
}
if (summary.numTotalTests === 0) {
  console.error('no test ran');
  process.exit(1);
}
