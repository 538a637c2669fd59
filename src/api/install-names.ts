/**
 * Names and ports of what `install` creates that the other roles look up at run time: the server Deployment (whose
 * image the restore-wait init container reuses, whose health port the download client reaches), the node-agent
 * DaemonSet, their service accounts, the credentials Secret and the default storage location.
 */
export const PART_OF_LABEL = 'app.kubernetes.io/part-of';
export const PART_OF = 'cairn';
export const SERVER_NAME = 'cairn';
export const NODE_AGENT_NAME = 'node-agent';
export const SERVER_SERVICE_ACCOUNT = 'cairn';
export const NODE_AGENT_SERVICE_ACCOUNT = 'cairn-node-agent';
export const CREDENTIALS_SECRET = 'cloud-credentials';
export const CREDENTIALS_KEY = 'cloud';
export const DEFAULT_LOCATION_NAME = 'default';
export const SERVER_HEALTH_PORT = 8085;
export const NODE_AGENT_HEALTH_PORT = 8086;
/** Where the server looks for plugin binaries; install mounts the plugins emptyDir there (Velero's /plugins). */
export const DEFAULT_PLUGIN_DIR = '/plugins';
/** The volume plugin images' init containers copy their binaries into, mounted at /target in them (as Velero). */
export const PLUGINS_VOLUME = 'plugins';

/** Cluster-scoped names include the namespace so two installs in different namespaces do not collide. */
export function clusterScopedName(base: string, ns: string): string {
  return ns === 'velero' ? base : `${base}-${ns}`;
}

/** The ClusterRole listing what restore may create (docs/rbac.md): the server keeps it current in the `all` scope. */
export const restoreRoleName = (ns: string): string => clusterScopedName('cairn-restore', ns);
