/**
 * What the cluster serves: every listable resource in its group's preferred version (Velero backs up the
 * preferred version and records it as `<version>-preferredversion/`). Also resolves the names users write in
 * filters (`deploy`, `deployments`, `deployments.apps`, `Deployment`) to group-resources.
 */
import { groupResource as grOf } from '../archive/paths.js';
import type { ApiReader } from './api-reader.js';

export interface ApiResource {
  group: string;
  version: string;
  /** `apps/v1`, `v1` */
  apiVersion: string;
  /** Plural resource name, e.g. `deployments`. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: readonly string[];
  shortNames: readonly string[];
  singularName: string;
  /** `deployments.apps` */
  groupResource: string;
}

interface RawResourceList {
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[]; shortNames?: string[]; singularName?: string }[];
}
interface RawGroupList {
  groups?: { name: string; preferredVersion?: { groupVersion: string; version: string }; versions?: { groupVersion: string; version: string }[] }[];
}

export class Discovery {
  private constructor(readonly resources: readonly ApiResource[]) {}

  static fromResources(resources: readonly ApiResource[]): Discovery {
    return new Discovery(resources);
  }

  /** Reads /api and /apis. A group whose preferred version cannot be read is skipped and reported. */
  static async load(api: ApiReader): Promise<{ discovery: Discovery; problems: string[] }> {
    const resources: ApiResource[] = [];
    const problems: string[] = [];
    const add = (group: string, version: string, list: RawResourceList) => {
      for (const r of list.resources ?? []) {
        if (r.name.includes('/')) continue; // subresources
        resources.push({
          group,
          version,
          apiVersion: group ? `${group}/${version}` : version,
          resource: r.name,
          kind: r.kind,
          namespaced: r.namespaced,
          verbs: r.verbs ?? [],
          shortNames: r.shortNames ?? [],
          singularName: r.singularName || r.kind.toLowerCase(),
          groupResource: grOf(r.name, group),
        });
      }
    };
    add('', 'v1', await api.get<RawResourceList>('/api/v1'));
    const groups = await api.get<RawGroupList>('/apis');
    for (const g of groups.groups ?? []) {
      const preferred = g.preferredVersion ?? g.versions?.[0];
      if (!preferred) continue;
      try {
        add(g.name, preferred.version, await api.get<RawResourceList>(`/apis/${preferred.groupVersion}`));
      } catch (err) {
        problems.push(`unable to discover resources of API group ${preferred.groupVersion}: ${(err as Error).message}`);
      }
    }
    return { discovery: new Discovery(resources), problems };
  }

  byGroupResource(gr: string): ApiResource | undefined {
    return this.resources.find((r) => r.groupResource === gr);
  }

  byApiVersionKind(apiVersion: string, kind: string): ApiResource | undefined {
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    return this.resources.find((r) => r.apiVersion === apiVersion && r.kind === kind) ?? this.resources.find((r) => r.group === group && r.kind === kind);
  }

  /**
   * The group-resource a filter entry names: `resource`, `resource.group`, singular, short name or kind
   * (case-insensitive). Undefined when the cluster serves nothing by that name.
   */
  resolve(name: string): string | undefined {
    const n = name.toLowerCase();
    const exact = this.resources.find((r) => r.groupResource === n);
    if (exact) return exact.groupResource;
    const dot = n.indexOf('.');
    const head = dot < 0 ? n : n.slice(0, dot);
    const group = dot < 0 ? undefined : n.slice(dot + 1);
    const matches = (r: ApiResource) =>
      (group === undefined || r.group === group) &&
      (r.resource === head || r.singularName === head || r.kind.toLowerCase() === head || r.shortNames.includes(head));
    // Prefer the core group, then the first served match (as kubectl does).
    const found = this.resources.filter(matches);
    return (found.find((r) => r.group === '') ?? found[0])?.groupResource;
  }

  /** API path of a collection (`namespace` for a namespaced resource in one namespace). */
  static collectionPath(r: ApiResource, namespace?: string): string {
    const root = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    return r.namespaced && namespace ? `${root}/namespaces/${namespace}/${r.resource}` : `${root}/${r.resource}`;
  }

  static itemPath(r: ApiResource, name: string, namespace?: string): string {
    return `${Discovery.collectionPath(r, r.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
  }
}
