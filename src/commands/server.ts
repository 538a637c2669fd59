import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { createLogger } from '../cli/logger.js';
import { connect } from '../kube/client.js';
import { createServer } from '../server/server.js';
import { runUntilSignal } from '../server/lifecycle.js';
import { SERVER_HEALTH_PORT } from '../install/manifests.js';
import { clientVersion } from '../version.js';

export default class Server extends BaseCommand<typeof Server> {
  static override summary = 'Run the cairn server (the controllers of the install namespace). Runs in the cairn Deployment.';
  static override hidden = true;
  static override flags = {
    'health-address': Flags.string({ description: 'Address the health endpoint binds to (default: $POD_IP, else all).', env: 'POD_IP', default: '0.0.0.0' }),
    'health-port': Flags.integer({ description: 'Port of /healthz and /readyz.', default: SERVER_HEALTH_PORT }),
    'default-volumes-to-fs-backup': Flags.boolean({ description: 'Back up all pod volumes with file-system backup unless excluded.', default: false }),
  };

  async run(): Promise<void> {
    const logger = createLogger({ level: this.flags['log-level'] === 'warn' ? 'info' : this.flags['log-level'], format: this.flags['log-format'], bindings: { component: 'server' } });
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const role = createServer({ kube, namespace: this.flags.namespace, logger, healthPort: this.flags['health-port'], healthHost: this.flags['health-address'], version: clientVersion() });
    await runUntilSignal(role, { logger, name: 'server' });
  }
}
