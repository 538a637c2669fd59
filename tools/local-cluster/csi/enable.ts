/**
 * Enables CSI snapshots on a running local cluster (`cluster:up -- --csi`, or a test through `enableCsi`): builds
 * the CSI binaries if missing, copies csi.proto and the VolumeSnapshot CRDs out of the Go module cache (never
 * committed), applies the CRDs and the stack of csi/manifests.ts, and waits until the snapshot controller and the
 * driver's controller pod run and every node's CSINode lists the driver. Safe to call again: it re-applies
 * (unchanged) and returns once all is ready.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ClusterState } from '../state.js';
import { csiModuleDir, setupToolchain } from '../toolchain.js';
import { DRIVER_NAME } from './driver/hostpath-driver.js';
import {
  CONTROLLER_DEPLOYMENT, CSI_NAMESPACE, csiManifests, NODE_DAEMONSET, SNAPSHOT_CLASS, SNAPSHOT_CONTROLLER, STORAGE_CLASS,
} from './manifests.js';
import { csiProtoPath } from './proto.js';
import { csiImages, DRIVER_CSI_PROTO, DRIVER_REGISTRATION_PROTO } from './images.js';
import { KUBELET_ROOT_DIR } from '../node/node-config.js';
import { pushImageLayout } from '../registry-push.js';

const run = promisify(execFile);

export interface EnableCsiOptions {
  state: ClusterState;
  log: (line: string) => void;
  timeoutMs?: number;
}

export interface EnableCsiResult {
  storageClass: string;
  snapshotClass: string;
  driver: string;
  alreadyEnabled: boolean;
  seconds: number;
}

const SPEC_MODULE = 'github.com/container-storage-interface/spec';
const SNAPSHOT_CLIENT_MODULE = 'github.com/kubernetes-csi/external-snapshotter/client/v8';

export async function enableCsi(opts: EnableCsiOptions): Promise<EnableCsiResult> {
  const { state, log } = opts;
  const started = Date.now();
  const deadline = started + (opts.timeoutMs ?? 15 * 60_000);
  const kubectl = async (args: string[], input?: string) => {
    const child = run(state.binaries.kubectl, ['--kubeconfig', state.kubeconfigPath, ...args], { maxBuffer: 64 * 1024 * 1024 });
    if (input !== undefined) child.child.stdin?.end(input);
    return (await child).stdout;
  };
  const result = { storageClass: STORAGE_CLASS, snapshotClass: SNAPSHOT_CLASS, driver: DRIVER_NAME };
  const alreadyEnabled = await isReady(kubectl, state).catch(() => false);
  if (alreadyEnabled) return { ...result, alreadyEnabled, seconds: (Date.now() - started) / 1000 };

  await setupToolchain(log, { csi: true });
  const csiDir = join(state.runDir, 'csi');
  const stateDir = join(csiDir, 'hostpath');
  mkdirSync(stateDir, { recursive: true });
  copyFileSync(join(await csiModuleDir(SPEC_MODULE, log), 'csi.proto'), csiProtoPath(state.runDir));

  const crdDir = join(await csiModuleDir(SNAPSHOT_CLIENT_MODULE, log), 'config/crd');
  const crds = readdirSync(crdDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => readFileSync(join(crdDir, f), 'utf8'));
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], crds.join('\n---\n'));
  // Polled rather than `kubectl wait`, which fails on a CRD whose status has no conditions yet.
  while (!(await crdsEstablished(kubectl).catch(() => false))) {
    if (Date.now() > deadline) throw new Error('the VolumeSnapshot CRDs did not become Established');
    await new Promise((r) => setTimeout(r, 250));
  }

  let manifests;
  if (state.runtime === 'containerd') {
    // Real nodes pull the stack's images from the cluster's registry like any other.
    for (const image of await csiImages(log)) {
      for (const n of image.names) await pushImageLayout(image.layoutDir, { registryUrl: state.registry.url, ...n });
    }
    manifests = csiManifests({
      stateDir,
      protoPath: DRIVER_CSI_PROTO,
      realNodes: { kubeletRootDir: KUBELET_ROOT_DIR, registrationProto: DRIVER_REGISTRATION_PROTO },
    });
  } else {
    manifests = csiManifests({ stateDir, protoPath: csiProtoPath(state.runDir) });
  }
  const file = join(csiDir, 'manifests.json');
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }, null, 2));
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', file]);
  log(`CSI: applied the snapshot CRDs and ${manifests.length} objects; waiting for the driver (manifests in ${file})`);

  while (!(await isReady(kubectl, state).catch(() => false))) {
    if (Date.now() > deadline) {
      throw new Error(`CSI did not become ready in time: see ${state.runDir}/logs/kubelet-*.log and the pods in ${CSI_NAMESPACE}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { ...result, alreadyEnabled: false, seconds: (Date.now() - started) / 1000 };
}

type Kubectl = (args: string[]) => Promise<string>;

const SNAPSHOT_CRDS = ['volumesnapshots', 'volumesnapshotcontents', 'volumesnapshotclasses'].map((p) => `crd/${p}.snapshot.storage.k8s.io`);

async function crdsEstablished(kubectl: Kubectl): Promise<boolean> {
  const list = JSON.parse(await kubectl(['get', ...SNAPSHOT_CRDS, '-o', 'json'])) as {
    items: { status?: { conditions?: { type: string; status: string }[] } }[];
  };
  return list.items.length === SNAPSHOT_CRDS.length &&
    list.items.every((c) => (c.status?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True'));
}

/** Snapshot controller and driver controller available, and every node's CSINode lists the driver. */
async function isReady(kubectl: Kubectl, state: ClusterState): Promise<boolean> {
  const deployments = JSON.parse(await kubectl(['-n', CSI_NAMESPACE, 'get', 'deployment', SNAPSHOT_CONTROLLER, CONTROLLER_DEPLOYMENT, '-o', 'json'])) as {
    items: { status?: { availableReplicas?: number } }[];
  };
  if (deployments.items.length !== 2 || deployments.items.some((d) => (d.status?.availableReplicas ?? 0) < 1)) return false;
  const ds = JSON.parse(await kubectl(['-n', CSI_NAMESPACE, 'get', 'daemonset', NODE_DAEMONSET, '-o', 'json'])) as {
    status?: { numberReady?: number };
  };
  if ((ds.status?.numberReady ?? 0) < state.nodes.length) return false;
  const csiNodes = JSON.parse(await kubectl(['get', 'csinode', '-o', 'json'])) as {
    items: { metadata: { name: string }; spec?: { drivers?: { name: string }[] | null } }[];
  };
  return state.nodes.every((n) => csiNodes.items.some((c) => c.metadata.name === n.name && (c.spec?.drivers ?? []).some((d) => d.name === DRIVER_NAME)));
}
