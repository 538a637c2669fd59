/**
 * Entry point of the test bed's volume provisioner (one per cluster; started by tools/local-cluster/cli.ts):
 * `main.ts --kubeconfig <admin> --run-dir <run-dir> [--log-file <path>]`.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../../../src/base/logger.js';
import { Provisioner } from './provisioner.js';
import { errorMessage } from '../kubelet/kube-api.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { kubeconfig: { type: 'string' }, 'run-dir': { type: 'string' }, 'log-file': { type: 'string' } },
    strict: true,
  });
  if (!values.kubeconfig || !values['run-dir']) {
    throw new Error('usage: main.ts --kubeconfig <file> --run-dir <dir> [--log-file <file>]');
  }
  const logFile = values['log-file'];
  if (logFile) await mkdir(dirname(logFile), { recursive: true });
  const destination = logFile ? createWriteStream(logFile, { flags: 'a' }) : process.stderr;
  const log = createLogger({ level: 'info', format: 'text', destination, bindings: { component: 'provisioner' } });
  const provisioner = new Provisioner({ kubeconfig: values.kubeconfig, runDir: resolve(values['run-dir']), log });
  const stop = () => {
    void provisioner.stop().finally(() => process.exit(0));
  };
  process.on('unhandledRejection', (err) => log.error({ err: errorMessage(err) }, 'unhandled error'));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    await provisioner.start();
  } catch (err) {
    log.fatal({ err: errorMessage(err) }, 'provisioner failed to start');
    process.exit(1);
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`provisioner: ${errorMessage(err)}\n`);
  process.exit(2);
});
