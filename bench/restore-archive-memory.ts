// `npm run bench:restore-memory [-- --namespaces N] [--selected N] [--runs N] [--cgroup DIR]`: the memory the server
// needs to read a backup archive for a restore of some of its namespaces. It writes an archive of N namespaces with 12
// items each (with the backup writer, so every item is there twice, as Velero writes it; objects as a cluster has
// them: managed fields, kubectl's last-applied annotation, pod status; 2.4 KB of JSON on average), then, in a fresh
// process per measurement, reads it the way the restore does: `whole` reads every item (what the restore did before
// it selected while reading), `selected` reads with the selection of a Restore that includes the first S namespaces.
// Each process reports its peak RSS (the kernel's maxrss), the heap in use once the items are read and selected, and
// how many items it holds. The measured processes run the built modules (dist/, `npm run build` first) under plain
// node, so neither tsx nor the compiler is in the figures.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { BackupArchiveWriter } from '../src/server/archive/writer.js';

const dist = join(dirname(dirname(fileURLToPath(import.meta.url))), 'dist');
if (!existsSync(join(dist, 'server/restore/restorer.js'))) throw new Error('dist/ is missing: run npm run build first');

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '2500' },
    selected: { type: 'string', default: '500' },
    runs: { type: 'string', default: '3' },
    // A memory cgroup (v1 or v2 directory, its limit already set) each measured process is started in, so V8 sizes its
    // heap as in a container with that limit (Node reads the cgroup's limit at start).
    cgroup: { type: 'string' },
  },
});
const namespaces = Number(values.namespaces);
const selected = Number(values.selected);
const nsName = (i: number) => `team-${String(i).padStart(5, '0')}`;

const managedFields = (manager: string) => [
  { manager, operation: 'Update', apiVersion: 'v1', time: '2026-12-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:team': {}, 'f:app.kubernetes.io/part-of': {} }, 'f:annotations': { '.': {}, 'f:note': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } }, 'f:spec': { '.': {}, 'f:replicas': {}, 'f:selector': {}, 'f:template': { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': {}, 'f:resources': {} } } } } } } },
  { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-12-01T10:00:05Z', fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { '.': {}, 'k:{"type":"Available"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} } }, 'f:observedGeneration': {}, 'f:replicas': {} } } },
];
/** What `kubectl apply` leaves on the objects it created: a copy of what it applied. */
const withLastApplied = (o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations: Record<string, string> }; status?: unknown }) => {
  const { status: _status, ...applied } = o;
  o.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] = JSON.stringify({ ...applied, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } });
  return o;
};
const conditions = ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: '2026-12-01T10:00:03Z' }));
const podStatus = (ip: string) => ({
  phase: 'Running',
  podIP: ip,
  hostIP: '192.168.1.10',
  startTime: '2026-12-01T10:00:01Z',
  conditions,
  containerStatuses: [{ name: 'web', ready: true, restartCount: 0, image: 'registry.example.com/shop/web:1.2.3', imageID: `registry.example.com/shop/web@sha256:${'ab'.repeat(32)}`, containerID: `containerd://${'cd'.repeat(32)}`, started: true, state: { running: { startedAt: '2026-12-01T10:00:02Z' } } }],
});
const meta = (name: string, namespace: string | undefined, i: number) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: `0000${i}-1111-2222-3333-${name.length}${namespace?.length ?? 0}`,
  resourceVersion: String(100000 + i),
  creationTimestamp: '2026-12-01T10:00:00Z',
  labels: { app: 'web', team: namespace ?? name, 'app.kubernetes.io/part-of': 'shop' },
  annotations: { note: 'x'.repeat(120) },
  managedFields: managedFields('kubectl-client-side-apply'),
});
const container = { name: 'web', image: 'registry.example.com/shop/web:1.2.3', ports: [{ containerPort: 8080, protocol: 'TCP' }], env: [{ name: 'MODE', value: 'production' }, { name: 'LOG_LEVEL', value: 'info' }], resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } } };
const podSpec = { containers: [container], serviceAccountName: 'web', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] };

/** The 12 items of one namespace: the Namespace, its claim's PV, and ten namespaced objects. */
function itemsOf(ns: string, i: number): { groupResource: string; version: string; namespace?: string; name: string; object: object }[] {
  const o = (groupResource: string, apiVersion: string, kind: string, name: string, namespaced: boolean, body: object) => ({
    groupResource,
    version: apiVersion.split('/').at(-1) ?? 'v1',
    ...(namespaced ? { namespace: ns } : {}),
    name,
    object: withLastApplied({ apiVersion, kind, metadata: meta(name, namespaced ? ns : undefined, i), ...body }),
  });
  return [
    o('namespaces', 'v1', 'Namespace', ns, false, { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } }),
    o('persistentvolumes', 'v1', 'PersistentVolume', `pvc-${ns}`, false, { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], claimRef: { namespace: ns, name: 'data' }, persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'standard', hostPath: { path: `/var/lib/volumes/${ns}` } } }),
    o('persistentvolumeclaims', 'v1', 'PersistentVolumeClaim', 'data', true, { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: `pvc-${ns}`, storageClassName: 'standard' }, status: { phase: 'Bound' } }),
    o('configmaps', 'v1', 'ConfigMap', 'kube-root-ca.crt', true, { data: { 'ca.crt': `-----BEGIN CERTIFICATE-----\n${'A'.repeat(1100)}\n-----END CERTIFICATE-----\n` } }),
    o('configmaps', 'v1', 'ConfigMap', 'settings', true, { data: { 'app.yaml': 'listen: 8080\n'.repeat(20) } }),
    o('serviceaccounts', 'v1', 'ServiceAccount', 'web', true, {}),
    o('secrets', 'v1', 'Secret', 'creds', true, { type: 'Opaque', data: { password: Buffer.from(`secret-${i}`).toString('base64') } }),
    o('deployments.apps', 'apps/v1', 'Deployment', 'web', true, { spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec } }, status: { replicas: 2, readyReplicas: 2 } }),
    o('replicasets.apps', 'apps/v1', 'ReplicaSet', 'web-5d8f7c', true, { spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec } }, status: { replicas: 2 } }),
    o('pods', 'v1', 'Pod', 'web-5d8f7c-a', true, { spec: { ...podSpec, nodeName: 'node-1' }, status: podStatus('10.0.0.1') }),
    o('pods', 'v1', 'Pod', 'web-5d8f7c-b', true, { spec: { ...podSpec, nodeName: 'node-2' }, status: podStatus('10.0.0.2') }),
    o('services', 'v1', 'Service', 'web', true, { spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }], clusterIP: '10.96.0.10', type: 'ClusterIP' } }),
  ];
}

async function writeArchive(): Promise<{ path: string; size: number; items: number; dispose: () => Promise<void> }> {
  const writer = await BackupArchiveWriter.create();
  const all = Array.from({ length: namespaces }, (_, i) => itemsOf(nsName(i), i));
  // The backup writes resource by resource, every namespace's items of one resource together.
  for (let r = 0; r < (all[0]?.length ?? 0); r++) for (const ns of all) await writer.addItem(ns[r]!);
  const done = await writer.finish();
  return { ...done, dispose: () => writer.dispose() };
}

/**
 * One measurement, in a process of its own: plain JavaScript on the built modules, so the process holds what the
 * server holds (no TypeScript loader). Prints one JSON line.
 */
const CHILD = `
const [mode, path, dist, selected] = process.argv.slice(1);
const { createReadStream } = await import('node:fs');
const load = (p) => import(new URL(p, dist).href);
const { newRestore } = await load('api/index.js');
const { readBackupArchive } = await load('server/archive/reader.js');
const { selectItems } = await load('server/restore/restorer.js');
const { restoreArchiveSelection } = await load('server/restore/archive-selection.js');
globalThis.gc();
const baseline = process.memoryUsage();
const included = Array.from({ length: Number(selected) }, (_, i) => 'team-' + String(i).padStart(5, '0'));
const restore = newRestore({ name: 'r', spec: { backupName: 'b', includedNamespaces: included } });
const started = performance.now();
const archive = await readBackupArchive(createReadStream(path), mode === 'selected' ? restoreArchiveSelection(restore) : {});
const chosen = selectItems(restore, archive.items);
const seconds = (performance.now() - started) / 1000;
globalThis.gc();
console.log(JSON.stringify({ mode, baselineRss: baseline.rss, maxRss: process.resourceUsage().maxRSS * 1024, heapHeld: process.memoryUsage().heapUsed - baseline.heapUsed, heapLimit: (await import('node:v8')).getHeapStatistics().heap_size_limit, held: archive.items.length, selected: chosen.length, seconds }));
`;

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;

const archive = await writeArchive();
if (values.cgroup) console.log(`measured in cgroup ${values.cgroup}`);
console.log(`archive: ${namespaces} namespaces, ${archive.items} items, ${(archive.size / 1024 / 1024).toFixed(1)} MB gzip'd; restore of ${selected} namespaces`);
try {
  const rows: string[] = [];
  for (let run = 0; run < Number(values.runs); run++) {
    for (const mode of ['whole', 'selected']) {
      const args = ['--expose-gc', '--input-type=module', '--eval', CHILD, mode, archive.path, pathToFileURL(`${dist}/`).href, String(selected)];
      const out = values.cgroup
        ? execFileSync('sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', values.cgroup, process.execPath, ...args], { encoding: 'utf8' })
        : execFileSync(process.execPath, args, { encoding: 'utf8' });
      const r = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { mode: string; baselineRss: number; maxRss: number; heapHeld: number; heapLimit: number; held: number; selected: number; seconds: number };
      rows.push(`| ${r.mode} | ${mb(r.maxRss)} | ${mb(r.baselineRss)} | ${mb(r.heapHeld)} | ${mb(r.heapLimit)} | ${r.held} | ${r.selected} | ${r.seconds.toFixed(2)} s |`);
    }
  }
  console.log('| read | peak RSS | RSS before reading | heap held after | heap limit | items held | items selected | time |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  await archive.dispose();
}
