/**
 * What the global setup hands every cluster test: how to reach the local cluster and its S3 server. Kept in its
 * own module (types only) so the global setup and the test-side helpers agree on one shape.
 */
export interface ClusterInfo {
  /** Admin kubeconfig (system:masters), certificates embedded. */
  kubeconfigPath: string;
  apiServerUrl: string;
  /** The cluster CA (PEM): signs the API server's and kubelets' serving certificates. */
  caFile: string;
  /** The run directory: logs/ holds every component's log, nodes/<name>/ each node's root. */
  runDir: string;
  /** The kubectl built for this cluster's version. */
  kubectlPath: string;
  s3: {
    endpoint: string;
    region: string;
    bucket: string;
    accessKeyId: string;
    secretAccessKey: string;
  };
  /** The cluster's OCI registry (plain HTTP): `host` is what image references start with. */
  registry: { host: string; url: string };
  /** The nodes; `rootDir` is each node's directory in the run directory (test/support/node-paths.ts maps paths into it). */
  nodes: { name: string; ip: string; rootDir: string }[];
  /** What runs the nodes: real kubelets on containerd (the e2e tier) or the kubelet stand-in (the integration tier). */
  runtime: 'local' | 'containerd';
  /** The kubelet's root directory on the nodes, as cairn's node agent must be told (`install --kubelet-root-dir`). */
  kubeletRootDir: string;
  /**
   * cairn's image to install: on real nodes this tree's image in the cluster's registry
   * (`<registry>/cairn-backup/cairn:dev-<digest>`); on the stand-in a name it maps to this tree's code.
   */
  image: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    cairnCluster: ClusterInfo;
  }
}
