/**
 * One real node's supervisor: runs inside the node's network, mount and PID namespaces (started by real-nodes.ts
 * under tini, the namespace's init, which reaps the containerd shims that outlive their parent), mounts the
 * node's private directories over /var/lib, /run and /var/log, then starts containerd, the kubelet and
 * kube-proxy, each logging to <run-dir>/logs/<component>-<node>.log.
 *
 * It exits when asked (SIGTERM: the kubelet and kube-proxy first, then containerd) or as soon as one of them
 * exits on its own (the node is broken; its log says why). Either way tini then exits, the kernel ends every
 * process left in the PID namespace (shims, containers) and, with the last of them, the mount namespace and
 * every mount made in it: stopping a node leaves no process and no mount behind.
 *
 * Usage: supervisor.ts <spec.json> (a NodeSupervisorSpec written by real-nodes.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export interface ComponentSpec {
  name: string;
  command: string;
  args: string[];
  logFile: string;
}

export interface NodeSupervisorSpec {
  node: string;
  /** Host directory → mount point inside the node (bind mounts, made before anything starts). */
  mounts: { from: string; to: string }[];
  /**
   * sysctl files the kubelet would rewrite machine-wide (it "tunes" vm.overcommit_memory, kernel.panic...):
   * inside the node each is covered by a file holding the value the kubelet wants, so it reads that and leaves
   * the machine's settings alone.
   */
  sysctlMasks: { path: string; value: string }[];
  /** Scratch folder for the sysctl mask files. */
  maskDir: string;
  env: Record<string, string>;
  containerd: ComponentSpec;
  /** containerd's socket: the kubelet starts once it exists. */
  containerdSocket: string;
  kubelet: ComponentSpec;
  kubeProxy: ComponentSpec;
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} supervisor: ${line}\n`);

function mountAll(spec: NodeSupervisorSpec): void {
  for (const m of spec.mounts) {
    mkdirSync(m.from, { recursive: true });
    execFileSync('mount', ['--bind', m.from, m.to]);
  }
  mkdirSync(spec.maskDir, { recursive: true });
  for (const [i, m] of spec.sysctlMasks.entries()) {
    const file = join(spec.maskDir, String(i));
    writeFileSync(file, `${m.value}\n`);
    execFileSync('mount', ['--bind', '-o', 'ro', file, m.path]);
  }
}

function start(c: ComponentSpec, env: NodeJS.ProcessEnv): ChildProcess {
  const fd = openSync(c.logFile, 'a');
  try {
    const child = spawn(c.command, c.args, { stdio: ['ignore', fd, fd], env });
    log(`started ${c.name} (pid ${child.pid ?? '?'})`);
    return child;
  } finally {
    closeSync(fd);
  }
}

const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;

async function stop(children: ChildProcess[], graceMs: number): Promise<void> {
  for (const c of children) if (!exited(c)) c.kill('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && children.some((c) => !exited(c))) await delay(50);
  for (const c of children) if (!exited(c)) c.kill('SIGKILL');
}

async function main(specFile: string): Promise<number> {
  const spec = JSON.parse(readFileSync(specFile, 'utf8')) as NodeSupervisorSpec;
  mountAll(spec);
  const env = { ...process.env, ...spec.env };
  const containerd = start(spec.containerd, env);
  let stopping = false;
  let agents: ChildProcess[] = [];
  const done = new Promise<number>((resolve) => {
    const finish = (why: string, code: number) => {
      if (stopping) return;
      stopping = true;
      log(why);
      void stop(agents, 5_000).then(() => stop([containerd], 5_000)).then(() => resolve(code));
    };
    for (const s of ['SIGTERM', 'SIGINT'] as const) process.on(s, () => finish(`${s}: stopping the node`, 0));
    const watch = (c: ChildProcess, name: string) =>
      c.on('exit', (code, signal) => finish(`${name} exited (${signal ?? `code ${code}`}): stopping the node`, 1));
    watch(containerd, spec.containerd.name);
    void (async () => {
      while (!existsSync(spec.containerdSocket) && !stopping) await delay(50);
      if (stopping) return;
      const kubelet = start(spec.kubelet, env);
      const kubeProxy = start(spec.kubeProxy, env);
      agents = [kubelet, kubeProxy];
      watch(kubelet, spec.kubelet.name);
      watch(kubeProxy, spec.kubeProxy.name);
    })();
  });
  return done;
}

main(process.argv[2] ?? '').then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
