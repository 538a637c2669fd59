/**
 * The objects that put the CSI snapshot stack on a local cluster: the snapshot controller, the host-path driver's
 * controller pod (driver + csi-provisioner + csi-snapshotter sharing a socket) and node plugin DaemonSet, the
 * CSIDriver, and the StorageClass / VolumeSnapshotClass tests use. Images map to the cached binaries on the local
 * kubelet (kubelet/images.ts). Paths to the run directory are written in, so they are built per cluster.
 */
import { DRIVER_NAME } from './driver/hostpath-driver.js';

export const CSI_NAMESPACE = 'kube-system';
export const STORAGE_CLASS = 'csi-hostpath-sc';
export const SNAPSHOT_CLASS = 'csi-hostpath-snapclass';
export const CONTROLLER_DEPLOYMENT = 'csi-hostpath-controller';
export const NODE_DAEMONSET = 'csi-hostpath-node';
export const SNAPSHOT_CONTROLLER = 'snapshot-controller';

/** Image names: only the repository's last segment matters to the local kubelet. */
export const IMAGES = {
  driver: 'registry.k8s.io/sig-storage/hostpathplugin:cairn-local',
  provisioner: 'registry.k8s.io/sig-storage/csi-provisioner:v6.3.0',
  snapshotter: 'registry.k8s.io/sig-storage/csi-snapshotter:v8.7.0',
  snapshotController: 'registry.k8s.io/sig-storage/snapshot-controller:v8.7.0',
} as const;

export interface ManifestOptions {
  /** `<run-dir>/csi/hostpath`: volumes and snapshots. */
  stateDir: string;
  /** csi.proto as the driver sees it: `<run-dir>/csi/csi.proto` on the stand-in, the driver image's own on real nodes. */
  protoPath: string;
  /**
   * Real nodes: the kubelet's root directory (the driver's node side mounts it where the kubelet has it and
   * registers itself through its plugins_registry), and the registration api.proto inside the driver image.
   * Without it, the stand-in's layout (/var/lib/kubelet, re-rooted per node; the stand-in finds the driver itself).
   */
  realNodes?: { kubeletRootDir: string; registrationProto: string };
}

type Obj = Record<string, unknown>;

const socketDir = { name: 'socket-dir', mountPath: '/csi' };

/** Real nodes see the run directory only through a hostPath (the stand-in's containers see the host's files). */
const stateVolume = (o: ManifestOptions) => (o.realNodes ? [{ name: 'state-dir', hostPath: { path: o.stateDir, type: 'DirectoryOrCreate' } }] : []);
const stateMount = (o: ManifestOptions) => (o.realNodes ? [{ name: 'state-dir', mountPath: o.stateDir }] : []);

function driverContainer(o: ManifestOptions, extra: Obj = {}, extraArgs: string[] = []): Obj {
  return {
    name: 'hostpath',
    image: IMAGES.driver,
    args: ['--endpoint=unix:///csi/csi.sock', '--nodeid=$(NODE_NAME)', `--state-dir=${o.stateDir}`, `--proto=${o.protoPath}`, ...extraArgs],
    env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
    securityContext: { privileged: true },
    ...extra,
  };
}

function nodeDriverContainer(o: ManifestOptions): Obj {
  if (!o.realNodes) {
    return driverContainer(o, {
      volumeMounts: [
        socketDir,
        // The driver's stage/publish mounts must reach the node (and so the workload's containers).
        { name: 'kubelet-dir', mountPath: '/var/lib/kubelet', mountPropagation: 'Bidirectional' },
      ],
    });
  }
  const root = o.realNodes.kubeletRootDir;
  return driverContainer(o, {
    volumeMounts: [
      socketDir,
      // Where the kubelet has it: the paths it passes to NodeStage/NodePublish are valid in the container too.
      { name: 'kubelet-dir', mountPath: root, mountPropagation: 'Bidirectional' },
      { name: 'registration-dir', mountPath: '/registration' },
      ...stateMount(o),
    ],
  }, [
    '--registration-dir=/registration',
    `--registration-proto=${o.realNodes.registrationProto}`,
    `--kubelet-endpoint=${root}/plugins/${DRIVER_NAME}/csi.sock`,
  ]);
}

function nodeVolumes(o: ManifestOptions): Obj[] {
  if (!o.realNodes) {
    return [
      // The local kubelet finds drivers by their socket in <node-root>/var/lib/kubelet/plugins/<driver>/.
      { name: 'socket-dir', hostPath: { path: `/var/lib/kubelet/plugins/${DRIVER_NAME}`, type: 'DirectoryOrCreate' } },
      { name: 'kubelet-dir', hostPath: { path: '/var/lib/kubelet', type: 'Directory' } },
    ];
  }
  const root = o.realNodes.kubeletRootDir;
  return [
    { name: 'socket-dir', hostPath: { path: `${root}/plugins/${DRIVER_NAME}`, type: 'DirectoryOrCreate' } },
    { name: 'kubelet-dir', hostPath: { path: root, type: 'Directory' } },
    // The kubelet's plugin watcher finds the driver by its registration socket here.
    { name: 'registration-dir', hostPath: { path: `${root}/plugins_registry`, type: 'DirectoryOrCreate' } },
    ...stateVolume(o),
  ];
}

export function csiManifests(o: ManifestOptions): Obj[] {
  const meta = (name: string) => ({ name, namespace: CSI_NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'csi-hostpath' } });
  const serviceAccount = (name: string): Obj => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name) });
  // The test bed binds the CSI components to cluster-admin rather than reproducing each component's own RBAC.
  const binding = (name: string): Obj => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `cairn-local-${name}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name, namespace: CSI_NAMESPACE }],
  });
  const selector = (app: string) => ({ matchLabels: { app } });
  return [
    serviceAccount('csi-hostpath'),
    serviceAccount(SNAPSHOT_CONTROLLER),
    binding('csi-hostpath'),
    binding(SNAPSHOT_CONTROLLER),
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: DRIVER_NAME },
      spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent'], fsGroupPolicy: 'File' },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(SNAPSHOT_CONTROLLER),
      spec: {
        replicas: 1,
        selector: selector(SNAPSHOT_CONTROLLER),
        template: {
          metadata: { labels: { app: SNAPSHOT_CONTROLLER } },
          spec: {
            serviceAccountName: SNAPSHOT_CONTROLLER,
            containers: [{ name: SNAPSHOT_CONTROLLER, image: IMAGES.snapshotController, args: ['--v=2', '--leader-election=false'] }],
          },
        },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(CONTROLLER_DEPLOYMENT),
      spec: {
        replicas: 1,
        selector: selector(CONTROLLER_DEPLOYMENT),
        template: {
          metadata: { labels: { app: CONTROLLER_DEPLOYMENT } },
          spec: {
            serviceAccountName: 'csi-hostpath',
            containers: [
              driverContainer(o, { volumeMounts: [socketDir, ...stateMount(o)] }),
              {
                name: 'csi-provisioner',
                image: IMAGES.provisioner,
                args: ['--csi-address=/csi/csi.sock', '--v=2', '--leader-election=false', '--extra-create-metadata'],
                volumeMounts: [socketDir],
              },
              {
                name: 'csi-snapshotter',
                image: IMAGES.snapshotter,
                args: ['--csi-address=/csi/csi.sock', '--v=2', '--leader-election=false', '--extra-create-metadata'],
                volumeMounts: [socketDir],
              },
            ],
            volumes: [{ name: 'socket-dir', emptyDir: {} }, ...stateVolume(o)],
          },
        },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: meta(NODE_DAEMONSET),
      spec: {
        selector: selector(NODE_DAEMONSET),
        template: {
          metadata: { labels: { app: NODE_DAEMONSET } },
          spec: {
            serviceAccountName: 'csi-hostpath',
            containers: [nodeDriverContainer(o)],
            volumes: nodeVolumes(o),
          },
        },
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: STORAGE_CLASS },
      provisioner: DRIVER_NAME,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    },
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      // The label is how Velero (and cairn) pick the snapshot class of a driver.
      metadata: { name: SNAPSHOT_CLASS, labels: { 'velero.io/csi-volumesnapshot-class': 'true' } },
      driver: DRIVER_NAME,
      deletionPolicy: 'Delete',
    },
  ];
}
