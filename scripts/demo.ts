/**
 * `npm run demo`: the whole main job on a fresh machine. Starts the local cluster (real control plane, two real
 * nodes: kubelet, containerd, runc, CNI; MinIO; a registry), builds cairn's image from this tree meanwhile and pushes
 * it into the cluster's registry, installs cairn from it as a user would, deploys a sample application with data on a
 * volume (backed up by file-system backup through the node agent), backs it up, deletes it, restores it and shows
 * that everything came back, data included. The cluster is stopped at the end unless --keep is given.
 *
 *   npm run demo [-- --keep] [-- --runtime local]
 *
 * `--runtime local` runs it on the kubelet stand-in instead (no root needed, no image: this tree's code runs as host
 * processes; docs/test-bed.md).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureImageArchive, pushCairnImage } from '../tools/image/test-bed-image.js';
import { down, up, type NodeRuntime } from '../tools/local-cluster/cluster.js';
import { KUBELET_ROOT_DIR } from '../tools/local-cluster/node/node-config.js';
import { cacheRoot } from '../tools/local-cluster/paths.js';
import { setupToolchain } from '../tools/local-cluster/toolchain.js';

function options(): { keep: boolean; runtime: NodeRuntime } {
  const { values } = parseArgs({
    options: { keep: { type: 'boolean', default: false }, runtime: { type: 'string', default: 'containerd' } },
    strict: true,
  });
  if (values.runtime !== 'containerd' && values.runtime !== 'local') throw new Error(`--runtime must be containerd or local, got ${values.runtime}`);
  return { keep: values.keep, runtime: values.runtime };
}

/** What the stand-in maps to this tree's code (any image whose repository ends in `cairn`). */
const STAND_IN_IMAGE = 'ghcr.io/cairn-backup/cairn:dev';
const NS = 'cairn';
const APP = 'demo-app';
const step = (s: string) => process.stdout.write(`\n\x1b[1m== ${s}\x1b[0m\n`);
const log = (line: string) => process.stdout.write(`   ${line}\n`);

const SAMPLE_APP = `
apiVersion: v1
kind: Namespace
metadata: {name: ${APP}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: ${APP}, labels: {app: web}}
data: {greeting: "hello from cairn"}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret, namespace: ${APP}, labels: {app: web}}
stringData: {token: "not-a-real-token"}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web, namespace: ${APP}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${APP}}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: web-data, namespace: ${APP}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${APP}, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      # Opt the volume in to file-system backup: its files go to the repository, not just the PVC object.
      annotations: {backup.velero.io/backup-volumes: data}
    spec:
      serviceAccountName: web
      containers:
      - name: web
        image: busybox:1.36
        command: [sh, -c, "[ -f /data/started ] || { date > /data/started; head -c 8388608 /dev/urandom > /data/blob; mkdir -p /data/notes; for i in 1 2 3 4 5; do echo note $i > /data/notes/$i.txt; done; }; sleep 3600"]
        volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: web-data}}]
`;

async function main(): Promise<void> {
  const { keep, runtime } = options();
  const realNodes = runtime === 'containerd';
  const started = Date.now();
  step('Toolchain (built once, cached under ~/.cache/cairn)');
  await setupToolchain(log, { nodes: realNodes });

  // cairn's image builds (buildah, layers cached) while the cluster starts; the two overlap.
  const imageStarted = Date.now();
  const building = realNodes ? ensureImageArchive(log).then(() => Date.now()) : undefined;
  building?.catch(() => undefined);
  step(realNodes
    ? "Local cluster: etcd, kube-apiserver, controller-manager, scheduler, 2 real nodes (kubelet, containerd, runc, CNI), MinIO, a registry; cairn's image built meanwhile"
    : 'Local cluster: etcd, kube-apiserver, controller-manager, scheduler, 2 kubelet stand-ins, MinIO');
  // The run directory's parent does not exist on a fresh machine until something makes it.
  mkdirSync(join(cacheRoot(), 'run'), { recursive: true });
  const runDir = mkdtempSync(join(cacheRoot(), 'run', 'demo-'));
  const { state, seconds } = await up({ runDir, name: 'demo', nodes: 2, runtime, log });
  log(`ready in ${seconds.toFixed(1)} s (every node Ready); logs in ${runDir}/logs`);
  const kubeconfig = state.kubeconfigPath;
  const kubectl = (args: string[], input?: string) =>
    execFileSync(state.binaries.kubectl, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', ...(input ? { input } : {}) });
  const cairn = (args: string[]) => {
    log(`$ cairn ${args.join(' ')}`);
    // The CLI writes straight to this terminal, so progress bars and colours show as a user would see them.
    const r = spawnSync(process.execPath, ['bin/run.js', ...args, '--kubeconfig', kubeconfig, '-n', NS], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error(`cairn ${args[0]} ${args[1] ?? ''} exited ${r.status}`);
  };

  // What the workload sees on its volume: each file's SHA-256, read through `kubectl exec` as a user would check it.
  const volumeChecksums = () => {
    const pod = kubectl(['-n', APP, 'get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
    return kubectl(['-n', APP, 'exec', pod, '-c', 'web', '--', 'sh', '-c', 'for i in $(seq 150); do [ -f /data/notes/5.txt ] && break; sleep 0.2; done; cd /data && find . -type f ! -path "./.velero/*" | sort | xargs sha256sum']).trim();
  };

  try {
    let image = STAND_IN_IMAGE;
    if (realNodes) {
      step("cairn's image into the cluster's registry");
      const pushed = await pushCairnImage({ registryUrl: state.registry.url, log });
      const builtAt = await building!;
      image = pushed.reference;
      log(`${image}: built in ${((builtAt - imageStarted) / 1000).toFixed(1)} s (beside the cluster's start), pushed in ${pushed.pushSeconds.toFixed(1)} s`);
    }

    step('Install cairn (server + node agent) with MinIO as the backup storage location');
    const creds = join(mkdtempSync(join(tmpdir(), 'cairn-demo-')), 'credentials');
    writeFileSync(creds, `[default]\naws_access_key_id = ${state.s3.accessKeyId}\naws_secret_access_key = ${state.s3.secretAccessKey}\n`, { mode: 0o600 });
    cairn(['install', '--provider', 'aws', '--bucket', state.s3.bucket, '--secret-file', creds,
      '--backup-location-config', `region=${state.s3.region},s3Url=${state.s3.endpoint},s3ForcePathStyle=true`,
      '--use-node-agent', '--image', image, ...(realNodes ? ['--kubelet-root-dir', KUBELET_ROOT_DIR] : []), '--wait']);
    cairn(['backup-location', 'get']);

    step(`Deploy a sample application in namespace ${APP}`);
    kubectl(['apply', '-f', '-'], SAMPLE_APP);
    kubectl(['-n', APP, 'rollout', 'status', 'deployment/web', '--timeout=120s']);
    const before = kubectl(['-n', APP, 'get', 'deploy,svc,cm,secret,sa,pvc', '-o', 'name']).split('\n').filter((l) => l && !l.includes('kube-root-ca') && !l.includes('serviceaccount/default')).sort();
    log(`objects: ${before.join(' ')}`);
    const dataBefore = volumeChecksums();
    log(`files on the volume: ${dataBefore.split('\n').length}`);

    step('Back up the namespace');
    cairn(['backup', 'create', 'demo-backup', '--include-namespaces', APP, '--wait']);
    cairn(['backup', 'get']);
    cairn(['backup', 'describe', 'demo-backup', '--details']);

    step('Disaster: delete the namespace');
    kubectl(['delete', 'namespace', APP, '--wait=true', '--timeout=120s']);
    log(`namespace ${APP} deleted`);

    step('Restore it from the backup');
    cairn(['restore', 'create', 'demo-restore', '--from-backup', 'demo-backup', '--wait']);
    cairn(['restore', 'describe', 'demo-restore']);
    kubectl(['-n', APP, 'rollout', 'status', 'deployment/web', '--timeout=120s']);
    const after = kubectl(['-n', APP, 'get', 'deploy,svc,cm,secret,sa,pvc', '-o', 'name']).split('\n').filter((l) => l && !l.includes('kube-root-ca') && !l.includes('serviceaccount/default')).sort();
    const missing = before.filter((o) => !after.includes(o));
    if (missing.length) throw new Error(`not restored: ${missing.join(', ')}`);
    const greeting = kubectl(['-n', APP, 'get', 'configmap', 'web-config', '-o', 'jsonpath={.data.greeting}']);
    log(`every object is back (${after.length}); configmap says "${greeting}"`);
    const dataAfter = volumeChecksums();
    if (dataAfter !== dataBefore) throw new Error(`the volume's files differ after the restore:\nbefore:\n${dataBefore}\nafter:\n${dataAfter}`);
    log(`every file on the volume is back, byte for byte (${dataAfter.split('\n').length} files)`);

    step(`Done in ${Math.round((Date.now() - started) / 1000)} s`);
    if (keep) log(`cluster left running: export KUBECONFIG=${kubeconfig}; stop it with: npm run cluster:down -- --run-dir ${runDir}`);
  } finally {
    if (!keep) {
      await down({ runDir, keep: false });
      log('cluster stopped');
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${(err as Error).message}\n`);
  process.exit(1);
});
