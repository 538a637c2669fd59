/**
 * The test bed's OCI registry: the CNCF distribution registry (built from the Go module proxy like the other
 * test-bed binaries), plain HTTP on one address of this machine, storage in <run-dir>/registry. Nodes pull every
 * image from it (containerd is told it speaks plain HTTP); nothing is pulled from outside. Images are put there
 * with pushImageLayout / pushOciArchive (registry-push.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { awaitHealthy, type ComponentStart } from './control-plane.js';
import { freePort } from './ports.js';
import { startProcess, type ProcessRecord } from './processes.js';
import type { HealthCheck } from './state.js';

export interface RegistryInfo {
  /** `host:port`, the registry part of image references (`<host>/cairn:dev`). */
  host: string;
  /** `http://host:port`. */
  url: string;
}

export interface RegistryStart extends ComponentStart {
  registry: RegistryInfo;
}

export interface RegistryOptions {
  runDir: string;
  binary: string;
  /** Address to listen on: loopback, or the host's address on the nodes' bridge when real nodes pull from it. */
  address: string;
  onStarted: (p: ProcessRecord) => void;
  timeoutMs: number;
}

export async function startRegistry(opts: RegistryOptions): Promise<RegistryStart> {
  const port = await freePort(opts.address);
  const host = `${opts.address}:${port}`;
  const dir = join(opts.runDir, 'registry');
  mkdirSync(join(dir, 'data'), { recursive: true });
  const configFile = join(dir, 'config.yml');
  writeFileSync(configFile, stringify({
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: {
      filesystem: { rootdirectory: join(dir, 'data') },
      delete: { enabled: true },
      // Nothing else writes to the storage: the upload purger's periodic scan is wasted work.
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: { addr: host },
  }));
  const proc = startProcess({
    name: 'registry',
    command: opts.binary,
    args: ['serve', configFile],
    // Tracing would otherwise be exported over OTLP to a collector on localhost that does not exist.
    env: { ...process.env, OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' },
    logFile: join(opts.runDir, 'logs', 'registry.log'),
  });
  opts.onStarted(proc);
  const url = `http://${host}`;
  const health: HealthCheck = { name: 'registry', url: `${url}/v2/` };
  await awaitHealthy(proc, health, {}, opts.timeoutMs);
  return { process: proc, health, registry: { host, url } };
}
