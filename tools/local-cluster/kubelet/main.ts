/**
 * Entry point of the local kubelet (one process per simulated node; started by tools/local-cluster/cli.ts).
 * SIGTERM/SIGINT stop pods with their grace periods and release mounts before exiting.
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../../src/base/logger.js';
import { apiServerAddress, KUBELET_USAGE, parseKubeletArgs } from './args.js';
import { Kubelet } from './kubelet.js';
import { errorMessage } from './kube-api.js';

const REPO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    process.stdout.write(`${KUBELET_USAGE}\n`);
    return;
  }
  const args = parseKubeletArgs(process.argv.slice(2));
  if (args.logFile) await mkdir(dirname(args.logFile), { recursive: true });
  const destination = args.logFile ? createWriteStream(args.logFile, { flags: 'a' }) : process.stderr;
  const log = createLogger({ level: 'info', format: 'text', destination, bindings: { component: 'kubelet', node: args.nodeName } });
  const options = {
    kubeconfig: args.kubeconfig,
    nodeName: args.nodeName,
    nodeIp: args.nodeIp,
    rootDir: resolve(args.rootDir),
    port: args.port,
    tlsCert: readFileSync(args.tlsCertFile),
    tlsKey: readFileSync(args.tlsKeyFile),
    caPem: readFileSync(args.caFile, 'utf8'),
    apiServer: apiServerAddress(args.apiServer),
    repoDir: REPO_DIR,
    log,
    backoff: { initialMs: args.backoffInitialMs, maxMs: args.backoffMaxMs },
  };
  let kubelet = new Kubelet(options);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping: terminating pods');
    kubelet.stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err: errorMessage(err) }, 'stop failed');
        process.exit(1);
      },
    );
  };
  // SIGUSR1 toggles a simulated crash: the first forgets all state but leaves pods running (the kubelet is
  // "down"), the next starts a fresh kubelet that must adopt what it finds. Used by the adoption test.
  let crashed: Promise<void> | undefined;
  process.on('SIGUSR1', () => {
    if (stopping) return;
    if (!crashed) {
      log.info('simulated crash: forgetting all pods, leaving their processes running');
      crashed = kubelet.abandon().then(() => log.info('simulated crash: kubelet is down'));
      return;
    }
    const previous = crashed;
    crashed = undefined;
    void previous.then(async () => {
      kubelet = new Kubelet(options);
      await kubelet.start();
      log.info('simulated crash: kubelet is up again');
    }).catch((err: unknown) => {
      log.fatal({ err: errorMessage(err) }, 'restart after simulated crash failed');
      process.exit(1);
    });
  });
  // One failed step must not take the node down with all its pods: log it; the sync loops retry.
  process.on('unhandledRejection', (err) => log.error({ err: errorMessage(err) }, 'unhandled error'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    await kubelet.start();
  } catch (err) {
    log.fatal({ err: errorMessage(err) }, 'kubelet failed to start');
    await kubelet.stop().catch(() => undefined);
    process.exit(1);
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`local kubelet: ${errorMessage(err)}\n`);
  process.exit(2);
});
