import { describe, expect, it } from 'vitest';
import type { V1ClusterRole, V1DaemonSet, V1Deployment, V1Namespace, V1Role, V1Secret, V1Service } from '@kubernetes/client-node';
import { allCrds } from '../../../src/api/index.js';
import { installManifests, printableObjects, NODE_AGENT_CLUSTER_RULES } from '../../../src/install/manifests.js';
import type { InstallOptions } from '../../../src/install/options.js';

const base: InstallOptions = { namespace: 'velero', image: 'cairn/cairn:test', useNodeAgent: false, defaultVolumesToFsBackup: false };
const withAws: InstallOptions = {
  ...base,
  useNodeAgent: true,
  storageLocation: { provider: 'aws', bucket: 'backups', prefix: 'c1', config: { region: 'us-east-1' } },
  credentials: Buffer.from('[default]\naws_access_key_id=AKIA\naws_secret_access_key=SECRETVALUE\n'),
};

const find = <T>(objs: { kind?: string; metadata?: { name?: string } }[], kind: string, name?: string): T =>
  objs.find((o) => o.kind === kind && (name === undefined || o.metadata?.name === name)) as T;

describe('install manifests', () => {
  it('applies CRDs first, then the namespace, then what lives in it', () => {
    const { objects } = installManifests(withAws);
    const kinds = objects.map((o) => o.kind);
    const crdCount = allCrds().length;
    expect(kinds.slice(0, crdCount).every((k) => k === 'CustomResourceDefinition')).toBe(true);
    expect(kinds[crdCount]).toBe('Namespace');
    expect(kinds.slice(-2)).toEqual(['Deployment', 'DaemonSet']);
    expect(kinds).toContain('BackupStorageLocation');
    expect(kinds).toContain('Secret');
  });

  it('leaves out the node agent unless asked', () => {
    const { objects } = installManifests(base);
    expect(objects.some((o) => o.kind === 'DaemonSet')).toBe(false);
    expect(objects.some((o) => o.metadata?.name === 'cairn-node-agent')).toBe(false);
    expect(objects.some((o) => o.kind === 'BackupStorageLocation')).toBe(false);
  });

  it('creates a default BackupStorageLocation as Velero does', () => {
    const bsl = find<{ spec: unknown }>(installManifests(withAws).objects, 'BackupStorageLocation');
    expect(bsl.spec).toEqual({ provider: 'aws', objectStorage: { bucket: 'backups', prefix: 'c1' }, config: { region: 'us-east-1' }, default: true, accessMode: 'ReadWrite' });
  });

  it('runs the server and node agent from the given image with the credentials mounted', () => {
    const { objects } = installManifests(withAws);
    const dep = find<V1Deployment>(objects, 'Deployment');
    const c = dep.spec?.template.spec?.containers[0];
    expect(c?.image).toBe('cairn/cairn:test');
    expect(c?.args).toEqual(['server']);
    expect(c?.env?.find((e) => e.name === 'AWS_SHARED_CREDENTIALS_FILE')?.value).toBe('/credentials/cloud');
    const ds = find<V1DaemonSet>(objects, 'DaemonSet');
    const agent = ds.spec?.template.spec?.containers[0];
    expect(agent?.args).toEqual(['node-agent', 'server']);
    const hostPods = agent?.volumeMounts?.find((m) => m.name === 'host-pods');
    expect(hostPods).toEqual({ name: 'host-pods', mountPath: '/host_pods', mountPropagation: 'HostToContainer', readOnly: true });
    expect(ds.spec?.template.spec?.volumes?.find((v) => v.name === 'host-pods')?.hostPath?.path).toBe('/var/lib/kubelet/pods');
  });

  it("annotates the server and node-agent pods for Prometheus as Velero's install does", () => {
    const { objects } = installManifests(withAws);
    expect(find<V1Deployment>(objects, 'Deployment').spec?.template.metadata?.annotations).toEqual({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8085', 'prometheus.io/path': '/metrics' });
    expect(find<V1DaemonSet>(objects, 'DaemonSet').spec?.template.metadata?.annotations).toEqual({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8086', 'prometheus.io/path': '/metrics' });
    // Nothing of the Prometheus operator unless asked: the default install needs no monitoring.coreos.com CRDs.
    expect(objects.some((o) => o.kind === 'ServiceMonitor' || o.kind === 'Service')).toBe(false);
  });

  it('with --metrics-service-monitor: a Service per component and a ServiceMonitor selecting them', () => {
    const { objects } = installManifests({ ...withAws, metricsServiceMonitor: true });
    const server = find<V1Service>(objects, 'Service', 'cairn-metrics');
    expect(server.spec).toEqual({ selector: { deploy: 'cairn' }, ports: [{ name: 'http-monitoring', port: 8085, targetPort: 'health' }] });
    const agents = find<V1Service>(objects, 'Service', 'node-agent-metrics');
    expect(agents.spec).toEqual({ clusterIP: 'None', selector: { name: 'node-agent' }, ports: [{ name: 'http-monitoring', port: 8086, targetPort: 'health' }] });
    const monitor = find<{ apiVersion: string; spec: { selector: { matchLabels: Record<string, string> }; endpoints: unknown[] } }>(objects, 'ServiceMonitor');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.spec.endpoints).toEqual([{ port: 'http-monitoring', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }]);
    for (const svc of [server, agents]) {
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) expect(svc.metadata?.labels?.[k]).toBe(v);
    }
    // Without the node agent, no Service for it.
    expect(installManifests({ ...base, metricsServiceMonitor: true }).objects.some((o) => o.metadata?.name === 'node-agent-metrics')).toBe(false);
  });

  it('reads pod volumes from the pods folder of the kubelet root directory it is given', () => {
    const { objects } = installManifests({ ...withAws, kubeletRootDir: '/var/lib/k0s/kubelet' });
    const ds = find<V1DaemonSet>(objects, 'DaemonSet');
    expect(ds.spec?.template.spec?.volumes?.find((v) => v.name === 'host-pods')?.hostPath?.path).toBe('/var/lib/k0s/kubelet/pods');
  });

  it('gives the node agent no wildcard permissions and no cluster-wide pod creation', () => {
    const { objects } = installManifests(withAws);
    const agentRole = find<V1ClusterRole>(objects, 'ClusterRole', 'cairn-node-agent');
    for (const r of agentRole.rules ?? []) {
      expect(r.verbs).not.toContain('*');
      expect(r.resources).not.toContain('*');
      if (r.resources?.includes('pods')) expect(r.verbs).not.toContain('create');
    }
    const nsRole = find<V1Role>(objects, 'Role', 'cairn-node-agent');
    expect(nsRole.metadata?.namespace).toBe('velero');
    expect(nsRole.rules?.find((r) => r.resources?.includes('pods'))?.verbs).toEqual(['create', 'delete']);
    expect(NODE_AGENT_CLUSTER_RULES.every((r) => r.why.length > 10)).toBe(true);
  });

  it('runs the server unprivileged: non-root, read-only root filesystem, no escalation, no capabilities, RuntimeDefault seccomp', () => {
    const spec = find<V1Deployment>(installManifests(withAws).objects, 'Deployment').spec?.template.spec;
    expect(spec?.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(spec?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
  });

  it('runs the node agent as root holding DAC_READ_SEARCH alone, privileged only with --privileged-node-agent', () => {
    const narrow = find<V1DaemonSet>(installManifests(withAws).objects, 'DaemonSet').spec?.template.spec;
    expect(narrow?.securityContext).toEqual({ runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } });
    expect(narrow?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['DAC_READ_SEARCH'] } });
    const privileged = find<V1DaemonSet>(installManifests({ ...withAws, privilegedNodeAgent: true }).objects, 'DaemonSet').spec?.template.spec;
    expect(privileged?.containers[0]?.securityContext).toEqual({ privileged: true, readOnlyRootFilesystem: true });
  });

  it('labels the namespace for Pod Security admission: restricted unless a pod needs a host path (node agent, filesystem provider)', () => {
    const level = (opts: InstallOptions) => find<V1Namespace>(installManifests(opts).objects, 'Namespace').metadata?.labels?.['pod-security.kubernetes.io/enforce'];
    expect(level(base)).toBe('restricted');
    expect(level({ ...withAws, useNodeAgent: false })).toBe('restricted');
    expect(level(withAws)).toBe('privileged');
    expect(level({ ...base, storageLocation: { provider: 'filesystem', bucket: 'b', config: { root: '/var/lib/cairn/storage' } } })).toBe('privileged');
  });

  it('suffixes cluster-scoped names outside the default namespace', () => {
    const { objects } = installManifests({ ...withAws, namespace: 'backup-system' });
    expect(objects.some((o) => o.kind === 'ClusterRole' && o.metadata?.name === 'cairn-server-backup-system')).toBe(true);
  });

  it('leaves the credentials Secret out of printed objects unless asked, and names what it left out', () => {
    const { objects } = installManifests(withAws);
    const printable = printableObjects(objects, false);
    expect(printable.objects.some((o) => o.kind === 'Secret')).toBe(false);
    expect(printable.objects).toHaveLength(objects.length - 1);
    expect(printable.omitted).toEqual([`${withAws.namespace}/cloud-credentials`]);
    expect(JSON.stringify(printable.objects)).not.toContain(withAws.credentials?.toString('base64'));
    const all = printableObjects(objects, true);
    expect(find<V1Secret>(all.objects, 'Secret').data?.cloud).toBe(withAws.credentials?.toString('base64'));
    expect(all.omitted).toEqual([]);
  });
});
