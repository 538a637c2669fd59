import { resolve } from 'node:path';
import { Flags } from '@oclif/core';
import { BaseCommand, currentClientConfig } from '../cli/base-command.js';
import { parseDuration } from '../cli/duration.js';
import { clientConfigPath } from '../cli/client-config.js';
import { defaultBundleName, writeBundle } from '../cli/debug/bundle.js';
import { collectBundle, type DebugSource } from '../cli/debug/collect.js';
import { kubeDebugSource } from '../cli/debug/kube-source.js';
import { allKindDefinitions } from '../api/index.js';
import { ClusterError, NotFoundError, oneLine } from '../base/errors.js';
import { clientVersion } from '../base/version.js';
import { checkReachable, connect } from '../kube/client.js';

export default class Debug extends BaseCommand<typeof Debug> {
  static override summary = 'Generate a debug bundle (a tar.gz of logs, objects and versions) to attach to a bug report.';
  static override description =
    'Collects the server, node-agent and data-mover pod logs, the velero.io objects of the install namespace, the server and node-agent workloads and ConfigMaps, ' +
    'the client, server and Kubernetes versions, and with --backup/--restore their `describe --details` and logs. Secrets are never read; credential-like values are redacted.';
  static override examples = ['<%= config.bin %> debug', '<%= config.bin %> debug --backup nightly-20251001 --output /tmp/nightly.tar.gz'];
  static override flags = {
    backup: Flags.string({ description: 'A backup whose description and log go into the bundle.' }),
    restore: Flags.string({ description: 'A restore whose description and log go into the bundle.' }),
    output: Flags.string({ description: 'Path of the bundle (default: ./bundle-YYYY-MM-DD-HH-MM-SS.tar.gz, UTC).' }),
    timeout: Flags.string({ description: 'How long to wait for each read through the cluster (a stored log, the server\'s version).', default: '1m' }),
  };

  async run(): Promise<void> {
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    const now = new Date();
    const file = resolve(this.flags.output ?? defaultBundleName(now));
    const namespace = this.flags.namespace;
    // Progress only for a person watching: one line per step on a terminal, nothing in pipes and CI logs.
    const onStep = process.stderr.isTTY ? (text: string) => process.stderr.write(`${text}...\n`) : undefined;

    let source: DebugSource | { unreachable: string };
    try {
      const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
      await checkReachable(kube);
      source = kubeDebugSource(kube, { namespace, timeoutMs, logger: this.log_ });
    } catch (err) {
      if (!(err instanceof ClusterError)) throw err;
      source = { unreachable: oneLine(err) };
    }
    const collected = await collectBundle(source, {
      namespace,
      backup: this.flags.backup,
      restore: this.flags.restore,
      clientVersion: clientVersion(),
      nodeVersion: process.versions.node,
      clientConfig: currentClientConfig(),
      clientConfigPath: clientConfigPath(),
      resources: allKindDefinitions.map((k) => ({ plural: k.plural, version: k.version })),
      ...(onStep ? { onStep } : {}),
    });
    await writeBundle(file, collected.entries, now);
    this.out(`Generated debug information bundle: ${file}`);
    if ('unreachable' in source) {
      throw new ClusterError(`${source.unreachable}: the bundle holds only the client's version and config`);
    }
    if (collected.problems.length) {
      process.stderr.write(`warning: ${collected.problems.length} part(s) could not be collected; cairn-bundle/collection.txt lists them\n`);
    }
    if (collected.missing.length) {
      throw new NotFoundError(`${collected.missing.join(' and ')} not found in namespace "${namespace}" (the bundle holds the rest)`);
    }
  }
}
