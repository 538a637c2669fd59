/**
 * Paths inside a backup tarball (docs/backup.md): `metadata/version`, then
 * `resources/<resource.group>/[<version>-preferredversion/]<namespaces/<ns>|cluster>/<name>.json`.
 * The writer (backup) and the reader (restore) both use these functions, so they cannot disagree.
 */
export const FORMAT_VERSION_PATH = 'metadata/version';
export const FORMAT_VERSION = '1.1.0';
export const PREFERRED_VERSION_SUFFIX = '-preferredversion';

/** `deployments.apps`; the core group has no suffix (`pods`). */
export function groupResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export function splitGroupResource(gr: string): { resource: string; group: string } {
  const dot = gr.indexOf('.');
  return dot < 0 ? { resource: gr, group: '' } : { resource: gr.slice(0, dot), group: gr.slice(dot + 1) };
}

export interface ItemPath {
  /** `resource.group` */
  groupResource: string;
  namespace?: string;
  name: string;
  /** Set for the `<version>-preferredversion/` copy. */
  preferredVersion?: string;
}

export function itemPath(p: ItemPath): string {
  const versionDir = p.preferredVersion ? `${p.preferredVersion}${PREFERRED_VERSION_SUFFIX}/` : '';
  const scope = p.namespace ? `namespaces/${p.namespace}` : 'cluster';
  return `resources/${p.groupResource}/${versionDir}${scope}/${p.name}.json`;
}

/** Parses an item path; undefined for anything that is not an item file (the reader warns and skips those). */
export function parseItemPath(path: string): ItemPath | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'resources' || parts.length < 4) return undefined;
  const gr = parts[1] as string;
  let i = 2;
  let preferredVersion: string | undefined;
  if ((parts[i] as string).endsWith(PREFERRED_VERSION_SUFFIX)) {
    preferredVersion = (parts[i] as string).slice(0, -PREFERRED_VERSION_SUFFIX.length);
    i++;
  }
  const file = parts[parts.length - 1] as string;
  if (!file.endsWith('.json')) return undefined;
  const name = file.slice(0, -'.json'.length);
  if (parts[i] === 'cluster' && parts.length === i + 2) return { groupResource: gr, name, ...(preferredVersion ? { preferredVersion } : {}) };
  if (parts[i] === 'namespaces' && parts.length === i + 3) {
    return { groupResource: gr, namespace: parts[i + 1] as string, name, ...(preferredVersion ? { preferredVersion } : {}) };
  }
  return undefined;
}
