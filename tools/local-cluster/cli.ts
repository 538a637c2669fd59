/**
 * The local test cluster's command line (npm run cluster:up / cluster:down / cluster:status):
 *   setup [--csi] [--all]          build and cache the binaries (first run only; scripts/test.mjs calls it);
 *                                  --csi also the CSI sidecars and snapshot controller; --all also the tools
 *                                  single tests build on first use (helm)
 *   up [--nodes N] [--run-dir D] [--name NAME] [--bucket B] [--csi] [--json]
 *                                  --csi: also the CSI snapshot stack (tools/local-cluster/csi/), on a new or a
 *                                  running cluster
 *   down [--run-dir D] [--name NAME] [--keep]
 *   status [--run-dir D] [--name NAME] [--json]
 * The default run directory is ~/.cache/cairn/run/<name> (name "cairn").
 */
import { parseArgs } from 'node:util';
import { clusterHealth, down, up } from './cluster.js';
import { enableCsi } from './csi/enable.js';
import { defaultRunDir } from './paths.js';
import { readState, stateFile } from './state.js';
import { setupToolchain } from './toolchain.js';

const log = (line: string) => process.stderr.write(`[local-cluster] ${line}\n`);

const USAGE = `usage: cli.ts setup [--csi] [--all] | up [--nodes N] [--run-dir DIR] [--name NAME] [--bucket B] [--csi] [--json]
       | down [--run-dir DIR] [--name NAME] [--keep] | status [--run-dir DIR] [--name NAME] [--json]`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      nodes: { type: 'string', default: '2' },
      'run-dir': { type: 'string' },
      name: { type: 'string', default: 'cairn' },
      bucket: { type: 'string' },
      keep: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      csi: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const runDir = values['run-dir'] ?? defaultRunDir(values.name);

  switch (cmd) {
    case 'setup': {
      const started = Date.now();
      const result = await setupToolchain(log, { csi: values.csi || values.all, tools: values.all });
      for (const t of result.timings) {
        log(`${t.group} ${t.version}: ${t.seconds === 'cached' ? 'cached' : `built in ${t.seconds}s`}`);
      }
      log(`toolchain ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      return 0;
    }
    case 'up': {
      const nodes = Number(values.nodes);
      if (!Number.isInteger(nodes)) throw new Error(`--nodes must be a whole number, got ${values.nodes}`);
      await setupToolchain(log, { csi: values.csi });
      const result = await up({ runDir, name: values.name, nodes, bucket: values.bucket, log });
      const { state } = result;
      if (values.csi) {
        const csi = await enableCsi({ state, log });
        log(`CSI ${csi.alreadyEnabled ? 'was already enabled' : `enabled in ${csi.seconds.toFixed(1)}s`}: StorageClass ${csi.storageClass}, VolumeSnapshotClass ${csi.snapshotClass}`);
      }
      if (values.json) {
        process.stdout.write(`${JSON.stringify(state, null, 2)}\n`);
      } else {
        log(result.started ? `cluster up in ${result.seconds.toFixed(1)}s` : 'a healthy cluster was already running');
        process.stdout.write([
          `run dir:     ${state.runDir}`,
          `kubeconfig:  ${state.kubeconfigPath}`,
          `api server:  ${state.apiServerUrl}`,
          `s3:          ${state.s3.endpoint} bucket ${state.s3.bucket} (credentials in ${stateFile(state.runDir)})`,
          `nodes:       ${state.nodes.map((n) => `${n.name} (${n.ip})`).join(', ') || 'none'}`,
          `logs:        ${state.runDir}/logs/`,
          `try:         ${state.binaries.kubectl} --kubeconfig ${state.kubeconfigPath} get nodes`,
          '',
        ].join('\n'));
      }
      return 0;
    }
    case 'down': {
      const result = await down({ runDir, keep: values.keep });
      log(`stopped ${result.stopped} processes and ${result.podProcesses} pod processes` +
        (result.removed ? `; removed ${runDir}` : `; kept ${runDir}`));
      return 0;
    }
    case 'status': {
      const state = readState(runDir);
      if (!state) {
        log(`no cluster in ${runDir}`);
        return 1;
      }
      const report = await clusterHealth(state);
      if (values.json) {
        process.stdout.write(`${JSON.stringify({ runDir, ...report }, null, 2)}\n`);
      } else {
        const width = Math.max(...report.components.map((c) => c.name.length));
        process.stdout.write(`run dir: ${runDir}\n`);
        for (const c of report.components) {
          process.stdout.write(`${c.name.padEnd(width)}  ${c.healthy ? 'ok  ' : 'FAIL'}  ${c.detail}\n`);
        }
      }
      return report.healthy ? 0 : 1;
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
