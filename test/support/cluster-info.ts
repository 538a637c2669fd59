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
  /** The simulated nodes; empty while the kubelet stand-in is not available. */
  nodes: { name: string; ip: string; rootDir: string }[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    cairnCluster: ClusterInfo;
  }
}
