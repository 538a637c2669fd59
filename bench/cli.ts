// `npm run bench:cli [-- --runs N] [--backups N] [--reuse]`: how long the CLI takes to answer the commands users and
// CI scripts run all day, cairn beside Velero's own `velero` CLI (v1.17.2, built from the Go module proxy by
// tools/peers/install-velero.sh), against the same API server and the same Backup objects. Each command runs once to
// warm the page cache, then N times with the two CLIs interleaved; the table gives median, min and max wall time of a
// whole process (start to exit) and the ratio of the medians. A local cluster is started for it (or `--reuse` takes
// the running one of `npm run cluster:up`); no cairn server is needed: get and describe only read the API.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildIfMissing, clusterFor, log, must, projectRoot, runProgram } from './cluster/harness.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    backups: { type: 'string', default: '20' },
    reuse: { type: 'boolean', default: false },
  },
});
const runs = Math.max(3, Number(values.runs));
const backups = Math.max(1, Number(values.backups));
const NAMESPACE = 'velero';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function veleroBinary(): string | undefined {
  try {
    return execFileSync('bash', [resolve(projectRoot, 'tools/peers/install-velero.sh')], { encoding: 'utf8', timeout: 1_800_000, stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1);
  } catch (err) {
    log(`the velero CLI could not be built (${(err as Error).message.split('\n')[0]}); measuring cairn alone`);
    return undefined;
  }
}

/** Backup objects as a finished backup leaves them, enough for get and describe to print a full row. */
function backupsYaml(): string {
  const docs: string[] = [];
  for (let i = 0; i < backups; i++) {
    docs.push(
      JSON.stringify({
        apiVersion: 'velero.io/v1',
        kind: 'Backup',
        metadata: { name: `bench-${String(i).padStart(3, '0')}`, namespace: NAMESPACE, labels: { 'velero.io/storage-location': 'default' } },
        spec: { includedNamespaces: ['app'], storageLocation: 'default', ttl: '720h0m0s', defaultVolumesToFsBackup: true },
      }),
    );
  }
  return docs.join('\n---\n');
}

async function main(): Promise<void> {
  await buildIfMissing('backup/get');
  const velero = veleroBinary();
  const { state, stop } = await clusterFor({ reuse: values.reuse, keep: false, name: 'bench-cli', nodes: 1 });
  const work = mkdtempSync(join(tmpdir(), 'bench-cli-'));
  try {
    const kubeconfig = state.kubeconfigPath;
    const env = { ...process.env, KUBECONFIG: kubeconfig, NO_COLOR: '1' };
    const cairn = join(projectRoot, 'bin', 'run.js');
    must('install the CRDs', await runProgram(process.execPath, [cairn, 'install', '--crds-only', '--kubeconfig', kubeconfig], env));
    const file = join(work, 'backups.yaml');
    writeFileSync(file, backupsYaml());
    const kubectl = state.binaries.kubectl;
    const namespaces = await runProgram(kubectl, ['--kubeconfig', kubeconfig, 'get', 'namespace', NAMESPACE], env);
    if (namespaces.code !== 0) must('create the namespace', await runProgram(kubectl, ['--kubeconfig', kubeconfig, 'create', 'namespace', NAMESPACE], env));
    must('create the backups', await runProgram(kubectl, ['--kubeconfig', kubeconfig, 'apply', '-f', file], env));
    // `velero backup describe` always asks the server for the backup's volume information (a DownloadRequest) and,
    // with no server to answer, waits for its 30-second timeout: its describe is not comparable here, so it runs for
    // cairn only.
    const commands: { label: string; args: string[]; velero: boolean }[] = [
      { label: 'version --client-only', args: ['version', '--client-only'], velero: true },
      { label: 'backup get', args: ['backup', 'get', '-n', NAMESPACE], velero: true },
      { label: 'backup describe NAME', args: ['backup', 'describe', 'bench-000', '-n', NAMESPACE], velero: false },
    ];
    const tools: { name: string; run: (args: string[]) => ReturnType<typeof runProgram> }[] = [
      { name: 'cairn', run: (args) => runProgram(process.execPath, [cairn, ...args], env) },
      ...(velero ? [{ name: 'velero', run: (args: string[]) => runProgram(velero, [...args, '--kubeconfig', kubeconfig], env) }] : []),
    ];
    const rows: string[] = [];
    const loads: number[] = [];
    for (const c of commands) {
      const these = tools.filter((t) => t.name === 'cairn' || c.velero);
      const times = new Map<string, number[]>(these.map((t) => [t.name, []]));
      for (const t of these) must(`${t.name} ${c.label}`, await t.run(c.args));
      for (let i = 0; i < runs; i++) {
        loads.push(loadavg()[0]!);
        for (const t of i % 2 === 0 ? these : [...these].reverse()) times.get(t.name)!.push(must(`${t.name} ${c.label}`, await t.run(c.args)).seconds);
      }
      const cell = (xs: number[]) => `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)}-${Math.max(...xs).toFixed(3)})`;
      const mine = times.get('cairn')!;
      const theirs = times.get('velero');
      rows.push(`${c.label.padEnd(24)} ${cell(mine).padEnd(26)} ${theirs ? cell(theirs).padEnd(26) : (velero && !c.velero ? '(waits for a server)' : '(not built)').padEnd(26)} ${theirs ? `${(median(mine) / median(theirs)).toFixed(2)}x` : ''}`);
      log(`${c.label}: done`);
    }
    const out = [
      `CLI response time: ${runs} runs per command after a warm-up, ${backups} Backup objects, seconds wall per process (median (min-max)); load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
      `${'command'.padEnd(24)} ${'cairn'.padEnd(26)} ${'velero v1.17.2'.padEnd(26)} cairn/velero`,
      ...rows,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    await stop();
  }
}

await main();
