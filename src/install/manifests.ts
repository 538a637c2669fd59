/**
 * Every object `install` creates, built from validated options. Pure: no cluster access, so `--dry-run -o yaml`
 * and the real install print and apply exactly the same objects. RBAC rules carry the reason they exist
 * (docs/rbac.md lists them).
 */
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1DaemonSet,
  V1Deployment,
  V1Namespace,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1ServiceAccount,
  V1EnvVar,
  V1Volume,
  V1VolumeMount,
  V1Service,
} from '@kubernetes/client-node';
import { allCrds } from '../api/index.js';
import { RESTORE_SCOPE_ANNOTATION } from '../api/restore-scope.js';
import { DEFAULT_KUBELET_ROOT_DIR, type InstallOptions } from './options.js';
import { accountRoles, policyRules, restoreScopeRules, type ExplainedRule, type RestoreScope } from './rbac.js';
import {
  PART_OF_LABEL,
  PART_OF,
  SERVER_NAME,
  NODE_AGENT_NAME,
  SERVER_SERVICE_ACCOUNT,
  NODE_AGENT_SERVICE_ACCOUNT,
  CREDENTIALS_SECRET,
  CREDENTIALS_KEY,
  DEFAULT_LOCATION_NAME,
  clusterScopedName,
  restoreRoleName,
  SERVER_HEALTH_PORT,
  NODE_AGENT_HEALTH_PORT,
  DEFAULT_PLUGIN_DIR,
  PLUGINS_VOLUME,
} from '../api/install-names.js';
import { pluginInitContainer } from './plugins.js';
import {
  NODE_AGENT_POD_SECURITY,
  SERVER_CONTAINER_SECURITY,
  namespacePodSecurity,
  nodeAgentContainerSecurity,
  podSecurityLabels,
  serverPodSecurity,
} from './pod-security.js';


const labels = (component: string): Record<string, string> => ({
  [PART_OF_LABEL]: PART_OF,
  'app.kubernetes.io/name': component,
  component: 'velero',
});

export { NODE_AGENT_CLUSTER_RULES, NODE_AGENT_NAMESPACE_RULES, SERVER_CLUSTER_RULES, SERVER_NAMESPACE_RULES, type ExplainedRule } from './rbac.js';

function clusterRole(name: string, rules: readonly ExplainedRule[]): V1ClusterRole {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels: labels(name) }, rules: policyRules(rules) };
}

/**
 * The ClusterRole of what restore may create. In the `all` scope it has no rules here: the server writes them (what
 * the API server serves) and install, which never names the field, leaves them alone when run again.
 */
function restoreClusterRole(name: string, scope: RestoreScope): V1ClusterRole {
  const role: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: labels(name), annotations: { [RESTORE_SCOPE_ANNOTATION]: scope === 'all' ? 'all' : 'listed' } },
  };
  if (scope !== 'all') role.rules = policyRules(restoreScopeRules(scope));
  return role;
}

function role(ns: string, name: string, rules: readonly ExplainedRule[]): V1Role {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns, labels: labels(name) }, rules: policyRules(rules) };
}

function clusterRoleBinding(ns: string, name: string, sa: string): V1ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: labels(name) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
  };
}

function roleBinding(ns: string, name: string, sa: string): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: ns, labels: labels(name) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
  };
}


/** The annotations Velero's install puts on its pods, which a Prometheus `kubernetes-pods` scrape job follows. */
export function prometheusAnnotations(port: number): Record<string, string> {
  return { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(port), 'prometheus.io/path': '/metrics' };
}

/** The port name of the metrics Services, as the velero chart's Service calls it. */
export const METRICS_PORT_NAME = 'http-monitoring';
/** What the ServiceMonitor selects the metrics Services by. */
const METRICS_COMPONENT = { 'app.kubernetes.io/component': 'metrics' };

function metricsService(ns: string, name: string, selector: Record<string, string>, port: number, headless: boolean): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, labels: { ...labels(name), ...METRICS_COMPONENT } },
    spec: {
      // One endpoint per node agent: Prometheus scrapes each pod, not a load-balanced one.
      ...(headless ? { clusterIP: 'None' } : {}),
      selector,
      ports: [{ name: METRICS_PORT_NAME, port, targetPort: 'health' }],
    },
  };
}

/** A monitoring.coreos.com/v1 ServiceMonitor over the metrics Services (the Prometheus operator's CRD). */
function serviceMonitor(ns: string): KubernetesObject {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: SERVER_NAME, namespace: ns, labels: labels(SERVER_NAME) },
    spec: {
      namespaceSelector: { matchNames: [ns] },
      selector: { matchLabels: { [PART_OF_LABEL]: PART_OF, ...METRICS_COMPONENT } },
      endpoints: [{ port: METRICS_PORT_NAME, path: '/metrics', interval: '30s', scrapeTimeout: '10s' }],
    },
  } as KubernetesObject;
}

function commonEnv(): V1EnvVar[] {
  return [
    { name: 'CAIRN_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
    // Health endpoints bind to the pod IP: on host-network nodes (and the local test bed) pods share ports.
    { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
  ];
}

interface PodStorage {
  volumes: V1Volume[];
  mounts: V1VolumeMount[];
  env: V1EnvVar[];
}

/** Credentials file and filesystem-provider root, mounted the same way into server and node-agent. */
function podStorage(opts: InstallOptions): PodStorage {
  const out: PodStorage = { volumes: [], mounts: [], env: [] };
  if (opts.credentials) {
    out.volumes.push({ name: 'cloud-credentials', secret: { secretName: CREDENTIALS_SECRET } });
    out.mounts.push({ name: 'cloud-credentials', mountPath: '/credentials', readOnly: true });
    out.env.push({ name: 'AWS_SHARED_CREDENTIALS_FILE', value: `/credentials/${CREDENTIALS_KEY}` });
  }
  const root = opts.storageLocation?.provider === 'filesystem' ? opts.storageLocation.config.root : undefined;
  if (root) {
    out.volumes.push({ name: 'storage-root', hostPath: { path: root, type: 'DirectoryOrCreate' } });
    out.mounts.push({ name: 'storage-root', mountPath: root });
  }
  return out;
}

/**
 * The mounted credentials file under the variables Velero's plugins read (Velero sets them all for its server):
 * GCP's and Azure's plugins find it there as AWS's does through AWS_SHARED_CREDENTIALS_FILE.
 */
function pluginCredentialsEnv(opts: InstallOptions): V1EnvVar[] {
  if (!opts.credentials) return [];
  const file = `/credentials/${CREDENTIALS_KEY}`;
  return ['GOOGLE_APPLICATION_CREDENTIALS', 'AZURE_CREDENTIALS_FILE', 'ALIBABA_CLOUD_CREDENTIALS_FILE'].map((name) => ({ name, value: file }));
}

function serverDeployment(opts: InstallOptions): V1Deployment {
  const storage = podStorage(opts);
  const args = ['server'];
  if (opts.defaultVolumesToFsBackup) args.push('--default-volumes-to-fs-backup');
  for (const name of opts.preferPlugins ?? []) args.push(`--prefer-plugin=${name}`);
  const plugins = opts.plugins ?? [];
  if (opts.scheduleSkipImmediately) args.push('--schedule-skip-immediately');
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: SERVER_NAME, namespace: opts.namespace, labels: labels(SERVER_NAME) },
    spec: {
      replicas: 1,
      // One server at a time: a rolling update would run the old and the new server side by side for a while, and
      // both would pick up the same backups and restores. Recreate stops the old pod before the new one starts.
      strategy: { type: 'Recreate' },
      selector: { matchLabels: { deploy: SERVER_NAME } },
      template: {
        metadata: { labels: { ...labels(SERVER_NAME), deploy: SERVER_NAME }, annotations: prometheusAnnotations(SERVER_HEALTH_PORT) },
        spec: {
          serviceAccountName: SERVER_SERVICE_ACCOUNT,
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          securityContext: serverPodSecurity({ filesystemProvider: opts.storageLocation?.provider === 'filesystem' }),
          containers: [
            {
              name: SERVER_NAME,
              image: opts.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['/cairn'],
              args,
              env: [...commonEnv(), ...storage.env, ...(plugins.length ? pluginCredentialsEnv(opts) : [])],
              ports: [{ name: 'health', containerPort: SERVER_HEALTH_PORT }],
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, periodSeconds: 30, failureThreshold: 5 },
              resources: { requests: { cpu: '500m', memory: '128Mi' }, limits: { memory: '512Mi' } },
              securityContext: SERVER_CONTAINER_SECURITY,
              // Plugin binaries: the init containers copy them here (Velero always mounts it, so `plugin add` needs
              // only an init container).
              volumeMounts: [...storage.mounts, { name: PLUGINS_VOLUME, mountPath: DEFAULT_PLUGIN_DIR }, { name: 'scratch', mountPath: '/scratch' }, { name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          ...(plugins.length ? { initContainers: plugins.map((image) => pluginInitContainer(image)) } : {}),
          volumes: [...storage.volumes, { name: PLUGINS_VOLUME, emptyDir: {} }, { name: 'scratch', emptyDir: {} }, { name: 'tmp', emptyDir: {} }],
        },
      },
    },
  };
}

function nodeAgentDaemonSet(opts: InstallOptions): V1DaemonSet {
  const storage = podStorage(opts);
  const args = ['node-agent', 'server'];
  if (opts.nodeAgentConfigMap) args.push(`--node-agent-configmap=${opts.nodeAgentConfigMap}`);
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: NODE_AGENT_NAME, namespace: opts.namespace, labels: labels(NODE_AGENT_NAME) },
    spec: {
      selector: { matchLabels: { name: NODE_AGENT_NAME } },
      template: {
        metadata: { labels: { ...labels(NODE_AGENT_NAME), name: NODE_AGENT_NAME, role: 'node-agent' }, annotations: prometheusAnnotations(NODE_AGENT_HEALTH_PORT) },
        spec: {
          serviceAccountName: NODE_AGENT_SERVICE_ACCOUNT,
          terminationGracePeriodSeconds: 30,
          securityContext: NODE_AGENT_POD_SECURITY,
          containers: [
            {
              name: NODE_AGENT_NAME,
              image: opts.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['/cairn'],
              args,
              // POD_NAME: data-mover pods copy this pod's image, volumes and env; there POD_NAME and POD_UID name the
              // data-mover pod itself, recorded in the repository locks it takes (so a leftover lock can be told apart).
              env: [
                ...commonEnv(),
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
                ...storage.env,
              ],
              ports: [{ name: 'health', containerPort: NODE_AGENT_HEALTH_PORT }],
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5 },
              resources: { requests: { cpu: '500m', memory: '128Mi' }, limits: { memory: '1Gi' } },
              securityContext: nodeAgentContainerSecurity(opts.privilegedNodeAgent ?? false),
              volumeMounts: [
                // Read-only: the node agent only finds volumes there; the data-mover pods mount the one they work on.
                { name: 'host-pods', mountPath: '/host_pods', mountPropagation: 'HostToContainer', readOnly: true },
                ...storage.mounts,
                { name: 'scratch', mountPath: '/scratch' },
                // The root filesystem is read-only; temporary files (a location's CA bundle) go here.
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            // The kubelet keeps pod volumes under <root-dir>/pods; HostToContainer propagation above shows volumes
            // mounted after the agent started.
            { name: 'host-pods', hostPath: { path: `${opts.kubeletRootDir ?? DEFAULT_KUBELET_ROOT_DIR}/pods` } },
            ...storage.volumes,
            { name: 'scratch', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}

function backupStorageLocation(opts: InstallOptions): KubernetesObject | undefined {
  const loc = opts.storageLocation;
  if (!loc) return undefined;
  const objectStorage: Record<string, string> = { bucket: loc.bucket };
  if (loc.prefix) objectStorage.prefix = loc.prefix;
  if (loc.caCert) objectStorage.caCert = loc.caCert;
  return {
    apiVersion: 'velero.io/v1',
    kind: 'BackupStorageLocation',
    metadata: { name: DEFAULT_LOCATION_NAME, namespace: opts.namespace, labels: labels('backup-storage-location') },
    spec: { provider: loc.provider, objectStorage, config: loc.config, default: true, accessMode: 'ReadWrite' },
  } as KubernetesObject;
}

export interface InstallManifests {
  /** In apply order: CRDs first, then the namespace, then what lives in it. */
  objects: KubernetesObject[];
}

export function installManifests(opts: InstallOptions): InstallManifests {
  const ns = opts.namespace;
  const serverRole = clusterScopedName('cairn-server', ns);
  const restoreRole = restoreRoleName(ns);
  const scope = opts.restoreScope ?? 'all';
  const agentRole = clusterScopedName('cairn-node-agent', ns);
  const serverRoles = accountRoles('server', scope, restoreRole);
  const namespace: V1Namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: ns,
      labels: {
        ...labels('namespace'),
        ...podSecurityLabels(namespacePodSecurity({ useNodeAgent: opts.useNodeAgent, filesystemProvider: opts.storageLocation?.provider === 'filesystem' })),
      },
    },
  };
  const sa = (name: string): V1ServiceAccount => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns, labels: labels(name) } });
  const objects: KubernetesObject[] = [
    ...allCrds(),
    namespace,
    sa(SERVER_SERVICE_ACCOUNT),
    clusterRole(serverRole, serverRoles.cluster),
    clusterRoleBinding(ns, serverRole, SERVER_SERVICE_ACCOUNT),
    restoreClusterRole(restoreRole, scope),
    clusterRoleBinding(ns, restoreRole, SERVER_SERVICE_ACCOUNT),
    role(ns, 'cairn-server', serverRoles.installNamespace),
    roleBinding(ns, 'cairn-server', SERVER_SERVICE_ACCOUNT),
  ];
  if (opts.useNodeAgent) {
    const agentRoles = accountRoles('node-agent', scope, restoreRole);
    objects.push(
      sa(NODE_AGENT_SERVICE_ACCOUNT),
      clusterRole(agentRole, agentRoles.cluster),
      clusterRoleBinding(ns, agentRole, NODE_AGENT_SERVICE_ACCOUNT),
      role(ns, 'cairn-node-agent', agentRoles.installNamespace),
      roleBinding(ns, 'cairn-node-agent', NODE_AGENT_SERVICE_ACCOUNT),
    );
  }
  if (opts.credentials) {
    const secret: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: CREDENTIALS_SECRET, namespace: ns, labels: labels(CREDENTIALS_SECRET) },
      data: { [CREDENTIALS_KEY]: opts.credentials.toString('base64') },
    };
    objects.push(secret);
  }
  const bsl = backupStorageLocation(opts);
  if (bsl) objects.push(bsl);
  objects.push(serverDeployment(opts));
  if (opts.useNodeAgent) objects.push(nodeAgentDaemonSet(opts));
  if (opts.metricsServiceMonitor) {
    objects.push(metricsService(ns, `${SERVER_NAME}-metrics`, { deploy: SERVER_NAME }, SERVER_HEALTH_PORT, false));
    if (opts.useNodeAgent) objects.push(metricsService(ns, `${NODE_AGENT_NAME}-metrics`, { name: NODE_AGENT_NAME }, NODE_AGENT_HEALTH_PORT, true));
    objects.push(serviceMonitor(ns));
  }
  return { objects };
}

/**
 * What `install --dry-run -o yaml|json` prints: every object but the Secrets, unless asked for them. Output that
 * leaves a Secret out still applies (`| kubectl apply -f -`), and credentials never reach a terminal or CI log by
 * accident; `omitted` names what was left out so the command can say so.
 */
export function printableObjects(objects: readonly KubernetesObject[], includeSecrets: boolean): { objects: KubernetesObject[]; omitted: string[] } {
  if (includeSecrets) return { objects: [...objects], omitted: [] };
  const omitted = objects.filter((o) => o.kind === 'Secret').map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`);
  return { objects: objects.filter((o) => o.kind !== 'Secret'), omitted };
}
