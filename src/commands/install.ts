import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { formatJson, formatTable, formatYaml } from '../cli/output.js';
import { createProgress } from '../cli/progress.js';
import { connect, checkReachable } from '../kube/client.js';
import { parseInstallFlags } from '../install/options.js';
import { installManifests, printableObjects } from '../install/manifests.js';
import { applyAll, type AppliedObject } from '../install/apply.js';
import { requireServiceMonitorCrd } from '../install/prerequisites.js';
import { describeReadiness, waitReady } from '../install/readiness.js';
import { defaultImage } from '../base/version.js';
import { parseDuration } from '../cli/duration.js';
import { UsageError } from '../base/errors.js';
import { CREDENTIALS_KEY, CREDENTIALS_SECRET } from '../api/install-names.js';

export default class Install extends BaseCommand<typeof Install> {
  static override summary = 'Install cairn into a cluster: CRDs, RBAC, a storage location, the server and optionally the node agent.';
  static override description = `Objects are applied with server-side apply, so running install again changes nothing.
With --dry-run nothing is created; -o yaml|json prints every object but the credentials Secret, so the output can be
piped to \`kubectl apply -f -\` without credentials reaching the terminal; --include-secrets prints it too.`;
  static override examples = [
    '<%= config.bin %> install --provider aws --bucket backups --secret-file ./credentials --backup-location-config region=us-east-1,s3Url=http://minio:9000,s3ForcePathStyle=true --use-node-agent --wait',
    '<%= config.bin %> install --provider filesystem --bucket backups --dry-run -o yaml',
    '<%= config.bin %> install --provider gcp --bucket backups --secret-file ./service-account.json --plugins velero/velero-plugin-for-gcp:v1.14.2 --wait',
  ];

  static override flags = {
    provider: Flags.string({ description: 'Object storage provider for the default backup location: aws (any S3-compatible store), filesystem, or one an installed plugin serves (e.g. gcp with --plugins).' }),
    bucket: Flags.string({ description: 'Bucket (aws) or directory under the root (filesystem) holding backups.' }),
    prefix: Flags.string({ description: 'Prefix inside the bucket under which backups are stored.' }),
    'backup-location-config': Flags.string({ description: 'Provider configuration as key=value pairs separated by commas (e.g. region=us-east-1,s3Url=http://minio:9000).' }),
    'secret-file': Flags.string({ description: 'AWS-style credentials file for the storage location; stored as the Secret cloud-credentials.' }),
    'no-secret': Flags.boolean({ description: 'Create no credentials Secret (the pods use credentials from their environment).', default: false }),
    cacert: Flags.string({ description: 'PEM file with the CA bundle to trust for the object store.' }),
    'use-node-agent': Flags.boolean({ description: 'Also install the node-agent DaemonSet (file-system backup and data movement).', default: false }),
    'privileged-node-agent': Flags.boolean({ description: 'Run the node agent as a privileged container (by default: root holding only the DAC_READ_SEARCH capability; docs/security.md).', default: false }),
    'node-agent-configmap': Flags.string({ description: 'ConfigMap (in the install namespace) the node agent reads its configuration from: loadConcurrency, podResources, priorityClassName.' }),
    'kubelet-root-dir': Flags.string({ description: 'The kubelet root directory on the nodes (the kubelet\'s --root-dir); the node agent reads pod volumes from its pods/ folder.', default: '/var/lib/kubelet' }),
    'default-volumes-to-fs-backup': Flags.boolean({ description: 'Back up all pod volumes with file-system backup unless excluded.', default: false }),
    'schedule-skip-immediately': Flags.boolean({ description: 'Skip the backup due right away when a schedule is created or unpaused (for schedules that do not set skipImmediately).', default: false }),
    'restore-resources': Flags.string({
      description: 'Resources restore may create, as resource[.group] separated by commas (e.g. deployments.apps,configmaps,persistentvolumeclaims); default: everything the API server serves. Without rbac.authorization.k8s.io resources the server holds no bind or escalate (docs/rbac.md).',
    }),
    image: Flags.string({ description: 'Container image for the server and node agent.', default: defaultImage() }),
    plugins: Flags.string({
      description: 'Plugin images (Velero plugins) to install, comma-separated; each becomes an init container copying its binary into the server\'s /plugins.',
      multiple: true,
      delimiter: ',',
    }),
    'prefer-plugin': Flags.string({
      description: 'Plugin names the server uses instead of the built-in of the same name (e.g. velero.io/aws), comma-separated.',
      multiple: true,
      delimiter: ',',
    }),
    'metrics-service-monitor': Flags.boolean({
      description: 'Also create Services for the server\'s and node agents\' /metrics and a Prometheus-operator ServiceMonitor (monitoring.coreos.com/v1) over them; the cluster must serve that CRD. Without it the pods still carry the prometheus.io/scrape annotations.',
      default: false,
    }),
    'dry-run': Flags.boolean({ description: 'Create nothing; with -o print the objects that would be created.', default: false }),
    'crds-only': Flags.boolean({ description: 'Apply (or with --dry-run print) only the CustomResourceDefinitions: updates the CRDs of an existing install.', default: false }),
    'include-secrets': Flags.boolean({ description: 'With --dry-run -o yaml|json: also print the credentials Secret (its values in the clear).', default: false }),
    output: Flags.option({ char: 'o', options: ['table', 'json', 'yaml'] as const, default: 'table' as const, description: 'Output format: the applied objects (or, with --dry-run, the objects themselves).' })(),
    wait: Flags.boolean({ description: 'Wait until the server and node agent are ready.', default: false }),
    timeout: Flags.string({ description: 'How long --wait waits (e.g. 5m, 90s).', default: '5m' }),
  };

  async run(): Promise<void> {
    const options = parseInstallFlags(this.flags);
    const timeoutMs = parseDuration('--timeout', this.flags.timeout);
    if (this.flags['crds-only'] && this.flags.wait) throw new UsageError('--wait', 'has nothing to wait for with --crds-only');
    const all = installManifests(options).objects;
    const objects = this.flags['crds-only'] ? all.filter((o) => o.kind === 'CustomResourceDefinition') : all;

    if (this.flags['dry-run']) {
      const { objects: printable, omitted } = printableObjects(objects, this.flags['include-secrets']);
      if (omitted.length > 0 && this.flags.output !== 'table') {
        process.stderr.write(`note: Secret ${omitted.join(', ')} is left out of the output (it holds credentials): add --include-secrets to print it, or create it with: kubectl -n ${options.namespace} create secret generic ${CREDENTIALS_SECRET} --from-file=${CREDENTIALS_KEY}=<credentials file>\n`);
      }
      if (this.flags.output === 'yaml') this.out(printable.map((o) => formatYaml(o)).join('\n---\n'));
      else if (this.flags.output === 'json') this.out(formatJson({ apiVersion: 'v1', kind: 'List', items: printable }));
      else this.out(formatTable([{ header: 'kind', value: (o: (typeof objects)[number]) => o.kind ?? '' }, { header: 'name', value: (o) => (o.metadata?.namespace ? `${o.metadata.namespace}/` : '') + (o.metadata?.name ?? '') }], objects));
      return;
    }

    const kube = connect({ kubeconfig: this.flags.kubeconfig, context: this.flags.context });
    await checkReachable(kube);
    if (options.metricsServiceMonitor && !this.flags['crds-only']) await requireServiceMonitorCrd(kube);
    const table = this.flags.output === 'table';
    const applied: AppliedObject[] = await applyAll(kube, objects, {
      onApplied: (r) => {
        if (table) this.out(`${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}: ${r.action}`);
      },
    });
    if (this.flags.wait) {
      const progress = createProgress({ label: 'Waiting for cairn' });
      const state = await waitReady(kube, {
        namespace: options.namespace,
        withNodeAgent: options.useNodeAgent,
        timeoutMs,
        onState: (s) => progress.update(s.server.ready + (s.nodeAgent?.ready ?? 0), s.server.desired + (s.nodeAgent?.desired ?? 0), describeReadiness(s)),
      }).finally(() => progress.stop());
      if (table) this.out(`cairn is ready: ${describeReadiness(state)}`);
    }
    if (this.flags.output === 'json') this.out(formatJson({ objects: applied }));
    else if (this.flags.output === 'yaml') this.out(formatYaml({ objects: applied }));
    else if (this.flags['crds-only']) this.out(`cairn's ${objects.length} CustomResourceDefinitions are applied.`);
    else if (!this.flags.wait) this.out(`cairn is installed in namespace "${options.namespace}". Use 'kubectl -n ${options.namespace} get pods' or 'install --wait' to see it ready.`);
  }
}

