/**
 * Velero's plugin kinds and names. A plugin binary registers plugins under a kind (the gRPC service that serves
 * them) and a name `<DNS subdomain>/<name>` (e.g. `velero.io/aws`); the server lists them through PluginLister at
 * start and refers to them by kind and name afterwards.
 */

/** The kinds a plugin can register, as Velero spells them (PluginLister answers with these strings). */
export const PluginKinds = [
  'BackupItemAction',
  'BackupItemActionV2',
  'DeleteItemAction',
  'ItemBlockAction',
  'ObjectStore',
  'RestoreItemAction',
  'RestoreItemActionV2',
  'VolumeSnapshotter',
] as const;
export type PluginKind = (typeof PluginKinds)[number];

export function isPluginKind(kind: string): kind is PluginKind {
  return (PluginKinds as readonly string[]).includes(kind);
}

/** One plugin of one binary: what PluginLister reports. */
export interface PluginIdentifier {
  /** The binary serving it (absolute path). */
  command: string;
  kind: PluginKind;
  name: string;
}

export class InvalidPluginNameError extends Error {}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Velero's rule for plugin names: exactly `<DNS-1123 subdomain>/<non-empty name>`. */
export function pluginNameProblem(name: string): string | undefined {
  const parts = name.split('/');
  if (parts.length !== 2) return `plugin name must have exactly two parts separated by a "/" (<DNS subdomain>/<name>); ${name} is invalid`;
  const [prefix, rest] = parts as [string, string];
  if (!prefix || !rest) return `both parts of the plugin name must be non-empty (<DNS subdomain>/<name>); ${name} is invalid`;
  if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) return `first part of the plugin name must be a valid DNS subdomain; "${prefix}" is invalid`;
  return undefined;
}

/** Providers and plugin names without a domain mean Velero's own: `aws` is `velero.io/aws` (as Velero resolves them). */
export function qualifiedPluginName(name: string): string {
  return name.includes('/') ? name : `velero.io/${name}`;
}
