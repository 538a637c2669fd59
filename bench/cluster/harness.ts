// What the cluster benchmarks (bench:fsb, bench:datamover) share: running programs to their end with wall time, a
// local cluster (fresh, or the running one of `npm run cluster:up` with --reuse), cairn installed with its node
// agent into a namespace of the bench's own (health ports moved to free ones), and clean-up of what a run leaves.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { clusterHealth, down, up } from '../../tools/local-cluster/cluster.js';
import { cacheRoot, defaultRunDir } from '../../tools/local-cluster/paths.js';
import { readState, type ClusterState } from '../../tools/local-cluster/state.js';
import { setupToolchain } from '../../tools/local-cluster/toolchain.js';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUN_JS = join(projectRoot, 'bin', 'run.js');
export const IMAGE = 'ghcr.io/cairn-backup/cairn:dev';
const NODE_AGENT_CONFIG = 'node-agent-config';

export const log = (line: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
  seconds: number;
}

/** Runs a program to its end; never throws for a non-zero exit (the caller decides). */
export function runProgram(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, input = ''): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolvePromise({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code: code ?? 128, seconds: (performance.now() - started) / 1000 }),
    );
    // A program that exits without reading its input makes this write fail with EPIPE; its exit code says enough.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

export function must(what: string, r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** A port nothing listens on at `host` right now. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** kubectl, the cairn CLI and `cairn repo` against one local cluster, for one install namespace. */
export class ClusterHarness {
  constructor(
    readonly state: ClusterState,
    readonly installNs: string,
  ) {}

  kubectl(args: string[], input = ''): Promise<RunResult> {
    return runProgram(this.state.binaries.kubectl, ['--kubeconfig', this.state.kubeconfigPath, ...args], process.env, input);
  }

  cairn(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunResult> {
    return runProgram(process.execPath, [RUN_JS, ...args, '--kubeconfig', this.state.kubeconfigPath], { ...env, CI: '1' });
  }

  /** The data path alone: `cairn repo ...` with `password` and the MinIO credentials, nothing from the cluster. */
  repo(args: string[], password: string): Promise<RunResult> {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(CAIRN_|AWS_)/.test(k)) env[k] = v;
    Object.assign(env, { CAIRN_REPO_PASSWORD: password, AWS_ACCESS_KEY_ID: this.state.s3.accessKeyId, AWS_SECRET_ACCESS_KEY: this.state.s3.secretAccessKey });
    return runProgram(process.execPath, [RUN_JS, 'repo', ...args], env);
  }

  /** A fresh repository URL in the cluster's MinIO for the data path alone. */
  repoUrl(prefix: string): string {
    const { s3 } = this.state;
    return `s3://${s3.bucket}/${prefix}?${new URLSearchParams({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: 'true' }).toString()}`;
  }

  async waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async json<T>(args: string[]): Promise<T> {
    return JSON.parse(must(`kubectl ${args.join(' ')}`, await this.kubectl([...args, '-o', 'json'])).stdout) as T;
  }

  /** `cairn install --use-node-agent` into the install namespace (storage prefix `prefix`), ready and Available. */
  /**
   * Installs cairn; with `nodeAgentConfig` the node agent reads the ConfigMap `node-agent-config` (set it again later
   * with setNodeAgentConfig).
   */
  async install(opts: { prefix: string; scratchDir: string; nodeAgentConfig?: object }): Promise<void> {
    const { state } = this;
    log(`installing cairn into ${this.installNs} (server + node-agent) ...`);
    const creds = join(opts.scratchDir, 'credentials');
    writeFileSync(creds, `[default]\naws_access_key_id = ${state.s3.accessKeyId}\naws_secret_access_key = ${state.s3.secretAccessKey}\n`, { mode: 0o600 });
    // On a kept cluster an earlier run's workloads carry the health ports patched in below by another field
    // manager; applying the install over them would add a second port named "health".
    must('remove an earlier install', await this.kubectl(['delete', 'deployment/cairn', 'daemonset/node-agent', '-n', this.installNs, '--ignore-not-found', '--wait=true']));
    if (opts.nodeAgentConfig) await this.applyNodeAgentConfig(opts.nodeAgentConfig);
    must(
      'cairn install',
      await this.cairn([
        'install', '-n', this.installNs, '--provider', 'aws', '--bucket', state.s3.bucket, '--prefix', opts.prefix, '--secret-file', creds,
        '--backup-location-config', `region=${state.s3.region},s3Url=${state.s3.endpoint},s3ForcePathStyle=true`,
        '--use-node-agent', '--image', IMAGE, ...(opts.nodeAgentConfig ? ['--node-agent-configmap', NODE_AGENT_CONFIG] : []),
      ]),
    );
    await this.useFreeHealthPorts();
    await this.waitFor('backup location Available', async () => {
      const r = await this.cairn(['backup-location', 'get', 'default', '-n', this.installNs, '-o', 'json']);
      return (JSON.parse(r.stdout) as { status?: { phase?: string } }).status?.phase === 'Available';
    });
  }

  private async applyNodeAgentConfig(config: object): Promise<void> {
    const ns = must('namespace', await this.kubectl(['create', 'namespace', this.installNs, '--dry-run=client', '-o', 'yaml']));
    must('apply namespace', await this.kubectl(['apply', '-f', '-'], ns.stdout));
    const cm = must('configmap', await this.kubectl(['-n', this.installNs, 'create', 'configmap', NODE_AGENT_CONFIG, `--from-literal=config.json=${JSON.stringify(config)}`, '--dry-run=client', '-o', 'yaml']));
    must('apply configmap', await this.kubectl(['apply', '-f', '-'], cm.stdout));
  }

  /** Replaces the node agent's ConfigMap (installed with one) and restarts the node agents so that they read it. */
  async setNodeAgentConfig(config: object): Promise<void> {
    await this.applyNodeAgentConfig(config);
    must('restart node agents', await this.kubectl(['rollout', 'restart', 'daemonset/node-agent', '-n', this.installNs]));
    must('rollout', await this.kubectl(['rollout', 'status', 'daemonset/node-agent', '-n', this.installNs, '--timeout=5m']));
  }

  /**
   * Local-cluster pods share their node's loopback address, and another local cluster on this machine (the shared
   * test cluster) uses the same addresses: a second node agent on the default health port would crash-loop on
   * EADDRINUSE and the figures would measure its restarts. So the server and the node agent get free ports.
   */
  private async useFreeHealthPorts(): Promise<void> {
    for (const [kind, name] of [['deployment', 'cairn'], ['daemonset', 'node-agent']] as const) {
      const port = await freePort(this.state.nodes[0]?.ip ?? '127.0.0.1');
      const patch = [
        { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: `--health-port=${port}` },
        { op: 'replace', path: '/spec/template/spec/containers/0/ports/0/containerPort', value: port },
      ];
      must(`patch ${kind}/${name}`, await this.kubectl(['patch', kind, name, '-n', this.installNs, '--type', 'json', '-p', JSON.stringify(patch)]));
    }
    must('rollout', await this.kubectl(['rollout', 'status', 'deployment/cairn', '-n', this.installNs, '--timeout=5m']));
    must('rollout', await this.kubectl(['rollout', 'status', 'daemonset/node-agent', '-n', this.installNs, '--timeout=5m']));
  }

  async nodeAgentRestarts(): Promise<number> {
    const agents = await this.json<{ items: { status?: { containerStatuses?: { restartCount?: number }[] } }[] }>(['get', 'pods', '-n', this.installNs, '-l', 'name=node-agent']);
    return agents.items.reduce((n, p) => n + (p.status?.containerStatuses ?? []).reduce((m, c) => m + (c.restartCount ?? 0), 0), 0);
  }

  /** Removes what a run leaves (also an interrupted earlier run's), not the CRDs others may share. */
  async cleanNamespaces(appNamespaces: string[]): Promise<void> {
    // Restores (and data movers' CRs) keep finalizers; deleted along with the server, nobody would remove them.
    for (const kind of ['restores', 'datauploads', 'datadownloads']) {
      const items = await this.kubectl(['get', kind, '-n', this.installNs, '-o', 'name']);
      for (const r of items.stdout.split('\n').filter(Boolean)) {
        await this.kubectl(['patch', r, '-n', this.installNs, '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}']);
      }
    }
    for (const ns of appNamespaces) await this.kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=5m']);
    await this.kubectl(['delete', 'namespace', this.installNs, '--ignore-not-found', '--wait=true', '--timeout=5m']);
  }
}

/** The cluster a bench runs on: the running one of `npm run cluster:up` (reuse), or a fresh one stopped after. */
export async function clusterFor(opts: { reuse: boolean; keep: boolean; name: string; nodes: number }): Promise<{ state: ClusterState; stop: () => Promise<void> }> {
  await setupToolchain(log);
  if (opts.reuse) {
    const state = readState(defaultRunDir('cairn'));
    if (!state || !(await clusterHealth(state)).healthy) throw new Error('--reuse: no healthy cluster from `npm run cluster:up -- --runtime local`');
    // The benches run this tree's code through the stand-in's image mapping; real nodes would pull an image instead.
    if (state.runtime === 'containerd') throw new Error('--reuse: the running cluster has real nodes; the benches run on the kubelet stand-in (`npm run cluster:up -- --runtime local`)');
    log(`reusing the cluster in ${state.runDir}`);
    return { state, stop: async () => undefined };
  }
  const parent = join(cacheRoot(), 'run');
  mkdirSync(parent, { recursive: true });
  const runDir = mkdtempSync(join(parent, `${opts.name}-`));
  const { state, seconds } = await up({ runDir, name: opts.name, nodes: opts.nodes, log });
  log(`fresh ${opts.nodes}-node cluster up in ${seconds.toFixed(1)} s (${runDir})`);
  return {
    state,
    stop: async () => {
      await down({ runDir, keep: opts.keep });
      log(opts.keep ? `cluster stopped; run dir kept: ${runDir}` : 'cluster stopped');
    },
  };
}

/** Builds cairn when dist/ lacks a command the bench needs (`dist/commands/<command>.js`). */
export async function buildIfMissing(command: string): Promise<void> {
  if (existsSync(join(projectRoot, 'dist', 'commands', `${command}.js`))) return;
  log('building cairn (npm run build) ...');
  await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: projectRoot });
}
