import type { V1DaemonSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { installManifests } from '../../../src/install/manifests.js';
import { parseInstallFlags, type InstallOptions } from '../../../src/install/options.js';

const options: InstallOptions = { namespace: 'velero', image: 'cairn/cairn:test', useNodeAgent: true, defaultVolumesToFsBackup: false };
const daemonSet = (o: InstallOptions) => installManifests(o).objects.find((x) => x.kind === 'DaemonSet') as V1DaemonSet;

describe('install: the node agent', () => {
  it('passes --node-agent-configmap through to node-agent server, and only when given', () => {
    expect(daemonSet(options).spec?.template.spec?.containers[0]?.args).toEqual(['node-agent', 'server']);
    expect(daemonSet({ ...options, nodeAgentConfigMap: 'node-agent-config' }).spec?.template.spec?.containers[0]?.args).toEqual([
      'node-agent',
      'server',
      '--node-agent-configmap=node-agent-config',
    ]);
  });

  it('tells the node agent its own pod name, whose image, volumes and env the data-mover pods copy', () => {
    const env = daemonSet(options).spec?.template.spec?.containers[0]?.env ?? [];
    expect(env).toContainEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    expect(daemonSet(options).spec?.template.spec?.volumes).toContainEqual({ name: 'host-pods', hostPath: { path: '/var/lib/kubelet/pods' } });
  });

  it('checks --node-agent-configmap: a valid name, and only with --use-node-agent', () => {
    expect(parseInstallFlags({ namespace: 'velero', image: 'i', 'use-node-agent': true, 'node-agent-configmap': 'cfg' }).nodeAgentConfigMap).toBe('cfg');
    expect(() => parseInstallFlags({ namespace: 'velero', image: 'i', 'use-node-agent': true, 'node-agent-configmap': 'Bad_Name' })).toThrow('--node-agent-configmap');
    expect(() => parseInstallFlags({ namespace: 'velero', image: 'i', 'node-agent-configmap': 'cfg' })).toThrow('needs --use-node-agent');
  });
});
