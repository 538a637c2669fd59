/**
 * Readiness and liveness probes, run as the kubelet runs them: httpGet (2xx/3xx is success), tcpSocket (the port
 * accepts a connection) and exec (exit 0, run inside the container's mount namespace as its user). gRPC probes
 * count as success. One Prober per probe of a container run loops until stopped (a startup probe until it passes).
 */
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { V1Container, V1Probe } from '@kubernetes/client-node';

export interface ProbeTarget {
  /** Where the pod's ports are: the node IP (pods share the host network). */
  podIp: string;
  container: V1Container;
  /** The container's main process (for exec probes, which join its mount namespace). */
  pid: number;
  env: ReadonlyMap<string, string>;
  runAsUser?: number | undefined;
  runAsGroup?: number | undefined;
}

export type ProbeResult = { ok: true } | { ok: false; message: string };

/** A named port (`health`) resolves through the container's ports, as in the kubelet. */
export function resolvePort(port: number | string | undefined, container: V1Container): number | undefined {
  if (typeof port === 'number') return port;
  if (port === undefined) return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

export async function runProbe(probe: V1Probe, t: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const port = resolvePort(probe.httpGet.port as number | string, t.container);
    if (port === undefined) return { ok: false, message: `unknown port ${String(probe.httpGet.port)}` };
    return httpProbe({
      https: probe.httpGet.scheme === 'HTTPS',
      host: probe.httpGet.host || t.podIp,
      port,
      path: probe.httpGet.path ?? '/',
      headers: Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value])),
      timeoutMs,
    });
  }
  if (probe.tcpSocket) {
    const port = resolvePort(probe.tcpSocket.port as number | string, t.container);
    if (port === undefined) return { ok: false, message: `unknown port ${String(probe.tcpSocket.port)}` };
    return tcpProbe(probe.tcpSocket.host || t.podIp, port, timeoutMs);
  }
  if (probe.exec?.command?.length) return execProbe(probe.exec.command, t, timeoutMs);
  return { ok: true };
}

function httpProbe(o: { https: boolean; host: string; port: number; path: string; headers: Record<string, string>; timeoutMs: number }): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const req = (o.https ? httpsRequest : httpRequest)(
      { host: o.host, port: o.port, path: o.path, method: 'GET', headers: { 'User-Agent': 'kube-probe/cairn-local', ...o.headers }, timeout: o.timeoutMs, rejectUnauthorized: false },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400 ? { ok: true } : { ok: false, message: `HTTP probe failed with statuscode: ${code}` });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${o.timeoutMs} ms`)));
    req.on('error', (err) => resolve({ ok: false, message: `Get "${o.https ? 'https' : 'http'}://${o.host}:${o.port}${o.path}": ${err.message}` }));
    req.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve({ ok: true });
    });
    socket.once('timeout', () => socket.destroy(new Error('timeout')));
    socket.once('error', (err) => resolve({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` }));
  });
}

function execProbe(command: string[], t: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  const args = ['--target', String(t.pid), '--mount'];
  if (t.runAsUser !== undefined) args.push(`--setuid=${t.runAsUser}`);
  if (t.runAsGroup !== undefined || t.runAsUser !== undefined) args.push(`--setgid=${t.runAsGroup ?? t.runAsUser ?? 0}`);
  return new Promise((resolve) => {
    execFile('nsenter', [...args, '--', ...command], { env: Object.fromEntries(t.env), timeout: timeoutMs }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true });
      const out = `${stdout}${stderr}`.trim().slice(0, 1024);
      resolve({ ok: false, message: out || err.message });
    });
  });
}

export interface ProberOptions {
  kind: 'readiness' | 'liveness' | 'startup';
  probe: V1Probe;
  target: ProbeTarget;
  /** Called when the result flips (readiness) or the failure threshold is reached (liveness). */
  onChange: (healthy: boolean, message: string | undefined) => void;
}

/** Runs one probe periodically with the kubelet's thresholds. */
export class Prober {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private healthy: boolean;
  private successes = 0;
  private failures = 0;

  constructor(private readonly o: ProberOptions) {
    // Readiness and startup start false until their first success; liveness starts healthy.
    this.healthy = o.kind === 'liveness';
  }

  start(): void {
    this.schedule((this.o.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const result = await runProbe(this.o.probe, this.o.target);
    if (this.stopped) return;
    const successThreshold = this.o.probe.successThreshold ?? 1;
    const failureThreshold = this.o.probe.failureThreshold ?? 3;
    if (result.ok) {
      this.failures = 0;
      this.successes += 1;
      if (!this.healthy && this.successes >= successThreshold) {
        this.healthy = true;
        this.o.onChange(true, undefined);
      }
    } else {
      this.successes = 0;
      this.failures += 1;
      // Readiness turns false at the threshold; before the first success it is already false.
      if (this.healthy && this.failures >= failureThreshold) {
        this.healthy = false;
        this.o.onChange(false, result.message);
      } else if (!this.healthy && this.o.kind !== 'liveness' && this.failures === failureThreshold) {
        this.o.onChange(false, result.message);
      }
    }
    // A startup probe has done its job after its first success.
    if (this.o.kind === 'startup' && this.healthy) return;
    this.schedule((this.o.probe.periodSeconds ?? 10) * 1000);
  }
}
