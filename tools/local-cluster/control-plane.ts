/**
 * The real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler, each a detached process logging to <run-dir>/logs/<component>.log, each awaited on its
 * health endpoint with a deadline. A component that exits while awaited fails fast with its log's tail.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StopWaiting, waitFor } from '../../test/support/wait.js';
import type { Pki } from './pki.js';
import { isHealthy, type TlsFiles } from './probe.js';
import { freePorts } from './ports.js';
import { isRunning, startProcess, type ProcessRecord } from './processes.js';
import type { HealthCheck } from './state.js';
import type { BinaryPaths } from './toolchain.js';

/** Service CIDR; its first address (10.96.0.1) is the `kubernetes` Service and a SAN of the API server. */
export const SERVICE_CIDR = '10.96.0.0/16';
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/**
 * What the controller manager runs: what workloads, namespaces, volumes and service accounts need, and
 * nothing that watches nodes' health (the kubelet stand-ins do not run a node lifecycle).
 */
export const CONTROLLERS = [
  'namespace-controller', 'garbage-collector-controller', 'serviceaccount-controller', 'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller', 'clusterrole-aggregation-controller',
  'replicaset-controller', 'deployment-controller', 'daemonset-controller', 'statefulset-controller',
  'replicationcontroller-controller', 'job-controller', 'cronjob-controller', 'ttl-after-finished-controller',
  'pod-garbage-collector-controller', 'endpoints-controller', 'endpointslice-controller',
  'persistentvolume-binder-controller', 'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller', 'ephemeral-volume-controller',
];

export interface ComponentStart {
  process: ProcessRecord;
  health: HealthCheck;
}

export interface EtcdStart extends ComponentStart {
  url: string;
}

export interface ControlPlaneContext {
  runDir: string;
  /**
   * Where the API server listens and what it advertises. Loopback for the kubelet stand-in; with real nodes the
   * host's address on their bridge, which pods reach through the `kubernetes` Service (its endpoint is kept by
   * the API server's lease reconciler, as in any cluster).
   */
  apiServerAddress?: string;
  /** Controllers run in addition to CONTROLLERS (real nodes need the node lifecycle controller). */
  extraControllers?: string[];
  binaries: BinaryPaths;
  pki: Pki;
  kubeconfigPath: string;
  /** Called right after each process starts, so a failed start can still be cleaned up. */
  onStarted: (p: ProcessRecord) => void;
}

const logFile = (runDir: string, component: string) => join(runDir, 'logs', `${component}.log`);

export async function startEtcd(ctx: ControlPlaneContext, timeoutMs: number): Promise<EtcdStart> {
  const [clientPort, peerPort] = await freePorts(2);
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const proc = startProcess({
    name: 'etcd',
    command: ctx.binaries.etcd,
    args: [
      '--name=local', `--data-dir=${join(ctx.runDir, 'etcd')}`,
      `--listen-client-urls=${url}`, `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=local=${peer}`,
      // Test data is disposable: skipping fsync makes every API write several times faster.
      '--unsafe-no-fsync=true', '--log-level=warn',
    ],
    logFile: logFile(ctx.runDir, 'etcd'),
  });
  ctx.onStarted(proc);
  const health: HealthCheck = { name: 'etcd', url: `${url}/health` };
  await awaitHealthy(proc, health, {}, timeoutMs);
  return { process: proc, health, url };
}

export interface ApiServerStart extends ComponentStart {
  url: string;
}

export async function startApiServer(ctx: ControlPlaneContext, etcdUrl: string, timeoutMs: number): Promise<ApiServerStart> {
  const address = ctx.apiServerAddress ?? '127.0.0.1';
  const loopback = address === '127.0.0.1';
  const [port] = await freePorts(1, address);
  const url = `https://${address}:${port}`;
  const { pki } = ctx;
  const proc = startProcess({
    name: 'kube-apiserver',
    command: ctx.binaries.kubeApiserver,
    args: [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${address}`, `--advertise-address=${address}`, `--secure-port=${port}`,
      `--cert-dir=${join(ctx.runDir, 'pki', 'apiserver-generated')}`,
      `--tls-cert-file=${pki.apiserverCert}`, `--tls-private-key-file=${pki.apiserverKey}`,
      `--client-ca-file=${pki.caCert}`,
      // No front proxy is used; naming a CA and an identity nobody holds keeps components that read
      // extension-apiserver-authentication from logging a missing request-header CA over and over.
      `--requestheader-client-ca-file=${pki.caCert}`, '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User', '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--authorization-mode=Node,RBAC',
      '--allow-privileged=true',
      `--kubelet-client-certificate=${pki.kubeletClientCert}`, `--kubelet-client-key=${pki.kubeletClientKey}`,
      `--kubelet-certificate-authority=${pki.caCert}`,
      '--kubelet-preferred-address-types=InternalIP',
      // Endpoints may not hold loopback addresses: the reconciler would retry (and log) every 10 s forever.
      // Pods of the stand-in reach the API server at 127.0.0.1 directly (it sets KUBERNETES_SERVICE_HOST).
      ...(loopback ? ['--endpoint-reconciler-type=none'] : []),
      '--profiling=false', '--v=1',
    ],
    logFile: logFile(ctx.runDir, 'kube-apiserver'),
  });
  ctx.onStarted(proc);
  const health: HealthCheck = { name: 'kube-apiserver', url: `${url}/readyz`, adminTls: true };
  await awaitHealthy(proc, health, adminTls(pki), timeoutMs);
  return { process: proc, health, url };
}

export async function startControllerManager(ctx: ControlPlaneContext, timeoutMs: number): Promise<ComponentStart> {
  const [port] = await freePorts(1);
  const { pki, kubeconfigPath } = ctx;
  const proc = startProcess({
    name: 'kube-controller-manager',
    command: ctx.binaries.kubeControllerManager,
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`, `--authorization-kubeconfig=${kubeconfigPath}`,
      '--bind-address=127.0.0.1', `--secure-port=${port}`,
      `--cert-dir=${join(ctx.runDir, 'pki', 'controller-manager-generated')}`,
      `--controllers=${[...CONTROLLERS, ...(ctx.extraControllers ?? [])].join(',')}`,
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--root-ca-file=${pki.caCert}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--cluster-name=cairn-local',
      '--leader-elect=false', '--profiling=false', '--v=1',
    ],
    logFile: logFile(ctx.runDir, 'kube-controller-manager'),
  });
  ctx.onStarted(proc);
  const health: HealthCheck = { name: 'kube-controller-manager', url: `https://127.0.0.1:${port}/healthz`, insecure: true };
  await awaitHealthy(proc, health, { insecure: true }, timeoutMs);
  return { process: proc, health };
}

export async function startScheduler(ctx: ControlPlaneContext, timeoutMs: number): Promise<ComponentStart> {
  const [port] = await freePorts(1);
  const { kubeconfigPath } = ctx;
  const proc = startProcess({
    name: 'kube-scheduler',
    command: ctx.binaries.kubeScheduler,
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`, `--authorization-kubeconfig=${kubeconfigPath}`,
      '--bind-address=127.0.0.1', `--secure-port=${port}`,
      `--cert-dir=${join(ctx.runDir, 'pki', 'scheduler-generated')}`,
      '--leader-elect=false', '--profiling=false', '--v=1',
    ],
    logFile: logFile(ctx.runDir, 'kube-scheduler'),
  });
  ctx.onStarted(proc);
  const health: HealthCheck = { name: 'kube-scheduler', url: `https://127.0.0.1:${port}/healthz`, insecure: true };
  await awaitHealthy(proc, health, { insecure: true }, timeoutMs);
  return { process: proc, health };
}

export function adminTls(pki: Pki): TlsFiles {
  return { caFile: pki.caCert, certFile: pki.adminCert, keyFile: pki.adminKey };
}

/** Polls a health URL until it answers 200; fails at once, with the log's tail, if the process exits. */
export async function awaitHealthy(proc: ProcessRecord, health: HealthCheck, tls: TlsFiles, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      if (!isRunning(proc)) throw new StopWaiting(new ProcessExitedError(proc));
      return isHealthy(health.url, tls);
    },
    { timeoutMs, intervalMs: 100, description: `${health.name} healthy at ${health.url} (log: ${proc.logFile})` },
  );
}

export class ProcessExitedError extends Error {
  constructor(proc: ProcessRecord) {
    super(`${proc.name} exited during start; last lines of ${proc.logFile}:\n${logTail(proc.logFile, 25)}`);
    this.name = 'ProcessExitedError';
  }
}

export function logTail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
