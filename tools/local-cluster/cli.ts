/**
 * The local test cluster's command line (npm run cluster:up / cluster:down / cluster:status):
 *   setup [--csi] [--runtime R] [--all]
 *                                  build and cache the binaries (first run only; scripts/test.mjs calls it);
 *                                  --csi also the CSI sidecars and snapshot controller; containerd (for real
 *                                  nodes) unless --runtime local; --all all of these and the tools single
 *                                  tests build on first use (helm)
 *   up [--nodes N] [--runtime containerd|local] [--run-dir D] [--name NAME] [--bucket B] [--csi] [--json]
 *                                  real nodes by default (kubelet, containerd, runc, CNI; see node/real-nodes.ts;
 *                                  root only); --runtime local: the kubelet stand-in (no root, starts in seconds)
 *                                  --csi: also the CSI snapshot stack (tools/local-cluster/csi/), on a new or a
 *                                  running cluster
 *   push <oci-archive|oci-layout-dir> <repository:tag> [--run-dir D] [--name NAME]
 *                                  push an image into the cluster's registry
 *   down [--run-dir D] [--name NAME] [--keep]
 *   status [--run-dir D] [--name NAME] [--json]
 * The default run directory is ~/.cache/cairn/run/<name> (name "cairn").
 */
import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { clusterHealth, down, up, type NodeRuntime } from './cluster.js';
import { enableCsi } from './csi/enable.js';
import { defaultRunDir } from './paths.js';
import { pushImageLayout, pushOciArchive } from './registry-push.js';
import { readState, stateFile } from './state.js';
import { setupToolchain } from './toolchain.js';

const log = (line: string) => process.stderr.write(`[local-cluster] ${line}\n`);

const USAGE = `usage: cli.ts setup [--csi] [--runtime R] [--all] | up [--nodes N] [--runtime containerd|local] [--run-dir DIR] [--name NAME]
         [--bucket B] [--csi] [--json]
       | down [--run-dir DIR] [--name NAME] [--keep] | status [--run-dir DIR] [--name NAME] [--json]
       | push <oci-archive|oci-layout-dir> <repository:tag> [--run-dir DIR] [--name NAME]`;

function runtimeOf(value: string): NodeRuntime {
  if (value === 'local' || value === 'containerd') return value;
  throw new Error(`--runtime must be local or containerd, got ${value}`);
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      // Real nodes: what the e2e tier and the demo run on. `local` is the kubelet stand-in (no root needed).
      runtime: { type: 'string', default: 'containerd' },
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
      const result = await setupToolchain(log, { csi: values.csi || values.all, nodes: values.all || runtimeOf(values.runtime) === 'containerd', tools: values.all });
      for (const t of result.timings) {
        log(`${t.group} ${t.version}: ${t.seconds === 'cached' ? 'cached' : `built in ${t.seconds}s`}`);
      }
      log(`toolchain ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      return 0;
    }
    case 'up': {
      const nodes = Number(values.nodes);
      if (!Number.isInteger(nodes)) throw new Error(`--nodes must be a whole number, got ${values.nodes}`);
      const runtime = runtimeOf(values.runtime);
      await setupToolchain(log, { csi: values.csi, nodes: runtime === 'containerd' });
      const result = await up({ runDir, name: values.name, nodes, runtime, bucket: values.bucket, log });
      const { state } = result;
      if (values.csi) {
        const csi = await enableCsi({ state, log });
        log(`CSI ${csi.alreadyEnabled ? 'was already enabled' : `enabled in ${csi.seconds.toFixed(1)}s`}: StorageClass ${csi.storageClass}, VolumeSnapshotClass ${csi.snapshotClass}`);
      }
      if (values.json) {
        process.stdout.write(`${JSON.stringify(state, null, 2)}\n`);
      } else {
        log(result.started ? `cluster up in ${result.seconds.toFixed(1)}s: every node Ready` : 'a healthy cluster was already running');
        process.stdout.write([
          `run dir:     ${state.runDir}`,
          `kubeconfig:  ${state.kubeconfigPath}`,
          `api server:  ${state.apiServerUrl}`,
          `s3:          ${state.s3.endpoint} bucket ${state.s3.bucket} (credentials in ${stateFile(state.runDir)})`,
          `registry:    ${state.registry.host} (plain HTTP; push with tools/local-cluster/registry-push.ts)`,
          `nodes:       ${state.nodes.map((n) => `${n.name} (${n.ip})`).join(', ') || 'none'} (${state.runtime === 'containerd' ? 'kubelet + containerd' : 'kubelet stand-in'})`,
          ...(result.started ? [`ready in:    ${result.seconds.toFixed(1)} s (first process to every node Ready)`] : []),
          `logs:        ${state.runDir}/logs/`,
          `try:         ${state.binaries.kubectl} --kubeconfig ${state.kubeconfigPath} get nodes`,
          '',
        ].join('\n'));
      }
      return 0;
    }
    case 'push': {
      const [source, target] = positionals;
      const m = /^([^:]+):([^:]+)$/.exec(target ?? '');
      if (!source || !m) throw new Error('usage: push <oci-archive|oci-layout-dir> <repository:tag>');
      const state = readState(runDir);
      if (!state) throw new Error(`no cluster in ${runDir}`);
      const opts = { registryUrl: state.registry.url, repository: m[1]!, tag: m[2]! };
      const pushed = statSync(source).isDirectory() ? await pushImageLayout(source, opts) : await pushOciArchive(source, opts);
      log(`pushed ${pushed.reference} (${pushed.digest}, ${(pushed.uploadedBytes / 1e6).toFixed(1)} MB uploaded)`);
      process.stdout.write(`${pushed.reference}\n`);
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
