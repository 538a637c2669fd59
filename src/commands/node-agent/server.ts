import { Flags } from '@oclif/core';
import { BaseCommand, roleLogLevel } from '../../cli/base-command.js';
import { UsageError } from '../../base/errors.js';
import { parseDuration } from '../../cli/duration.js';
import { createLogger } from '../../base/logger.js';
import { connect } from '../../kube/client.js';
import { createNodeAgent } from '../../agent/node-agent.js';
import { runUntilSignal } from '../../kube/lifecycle.js';
import { NODE_AGENT_HEALTH_PORT } from '../../api/install-names.js';
import { parseListenAddress } from '../../kube/health.js';
import { roleEndpointFlags } from '../../cli/role-flags.js';

export default class NodeAgentServer extends BaseCommand<typeof NodeAgentServer> {
  static override summary = 'Run the node agent of one node. Runs in the node-agent DaemonSet.';
  static override hidden = true;
  static override flags = {
    ...roleEndpointFlags(NODE_AGENT_HEALTH_PORT),
    'node-name': Flags.string({ description: 'This node (default: $NODE_NAME).', env: 'NODE_NAME' }),
    'pod-name': Flags.string({ description: 'This node-agent\'s pod (default: $POD_NAME); data-mover pods copy its image, volumes and env.', env: 'POD_NAME' }),
    'node-agent-configmap': Flags.string({ description: 'ConfigMap in the install namespace with the node-agent configuration (loadConcurrency, podResources, priorityClassName).' }),
    'data-mover-prepare-timeout': Flags.string({ description: 'How long a PVB/PVR may take from accepted to its data-mover pod running (Go duration).', default: '30m' }),
    'resource-timeout': Flags.string({ description: 'How long the data mover waits for cluster resources (Go duration).', default: '10m' }),
  };

  async run(): Promise<void> {
    const nodeName = this.flags['node-name'];
    if (!nodeName) throw new UsageError('--node-name', 'required (or set NODE_NAME from the downward API)');
    const prepareTimeoutMs = parseDuration('--data-mover-prepare-timeout', this.flags['data-mover-prepare-timeout']);
    const resourceTimeoutMs = parseDuration('--resource-timeout', this.flags['resource-timeout']);
    const metricsAddress = parseListenAddress('--metrics-address', this.flags['metrics-address']);
    const level = roleLogLevel(this.flags['log-level']);
    const logger = createLogger({ level, format: this.flags['log-format'], bindings: { component: 'node-agent', node: nodeName } });
    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    const role = createNodeAgent({
      kube,
      namespace: this.flags.namespace,
      nodeName,
      logger,
      healthPort: this.flags['health-port'],
      healthHost: this.flags['health-address'],
      metricsAddress,
      podName: this.flags['pod-name'],
      configMapName: this.flags['node-agent-configmap'],
      prepareTimeoutMs,
      resourceTimeoutMs,
      logLevel: level,
    });
    await runUntilSignal(role, { logger, name: 'node-agent' });
  }
}
