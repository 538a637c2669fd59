/**
 * Keeps the restore ClusterRole current when install left it to the server (annotation `cairn.io/restore-scope:
 * all`): every top-level resource the API server serves, each with create and patch, and update on its status
 * (src/api/restore-scope.ts), so a restore can bring back any kind, custom resources included, without the server
 * holding any sub-resource such as pods/exec or serviceaccounts/token. The server may write rules it does not hold
 * because restoring RBAC objects already needs `escalate` on ClusterRoles; with a listed scope it has neither and
 * leaves the role alone.
 *
 * Refreshed at start, every few minutes, and by the restore right after it created a CustomResourceDefinition (so
 * the custom resources that follow in the same restore can be created).
 */
import type { V1ClusterRole, V1PolicyRule } from '@kubernetes/client-node';
import { RESTORE_SCOPE_ANNOTATION, restoreRulesFor, type ServedResource } from '../../api/restore-scope.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import type { ApiReader } from '../backup/api-reader.js';

interface RawResourceList {
  resources?: { name: string; verbs?: string[] }[];
}
interface RawGroupList {
  groups?: { name: string; preferredVersion?: { groupVersion: string } }[];
}

/** Every resource of every group's preferred version, with whether its status takes updates. */
export async function servedResources(api: ApiReader): Promise<ServedResource[]> {
  const out: ServedResource[] = [];
  const add = (group: string, list: RawResourceList) => {
    const all = list.resources ?? [];
    for (const r of all) {
      if (r.name.includes('/')) continue;
      const status = all.find((s) => s.name === `${r.name}/status`);
      out.push({ group, resource: r.name, verbs: r.verbs ?? [], statusUpdatable: Boolean(status?.verbs?.includes('update')) });
    }
  };
  add('', await api.get<RawResourceList>('/api/v1'));
  for (const g of (await api.get<RawGroupList>('/apis')).groups ?? []) {
    if (!g.preferredVersion) continue;
    // A group whose discovery fails (an aggregated API that is down) is left out until the next refresh.
    const list = await api.get<RawResourceList>(`/apis/${g.preferredVersion.groupVersion}`).catch(() => undefined);
    if (list) add(g.name, list);
  }
  return out;
}

const sameRules = (a: readonly V1PolicyRule[], b: readonly V1PolicyRule[]) => JSON.stringify(a) === JSON.stringify(b);

export interface RestoreRoleKeeper {
  /** Brings the role up to date with what the API server serves; resolves to true when it changed it. */
  refresh(): Promise<boolean>;
}

export function restoreRoleKeeper(opts: { kube: Kube; api: ApiReader; name: string; logger: Logger }): RestoreRoleKeeper {
  let running: Promise<boolean> | undefined;
  const once = async (): Promise<boolean> => {
    let role: V1ClusterRole;
    try {
      role = await opts.kube.rbac.readClusterRole({ name: opts.name });
    } catch (err) {
      if (isNotFound(err)) opts.logger.warn({ clusterRole: opts.name }, 'the restore ClusterRole does not exist: restores create nothing; re-run install');
      throw err;
    }
    if (role.metadata?.annotations?.[RESTORE_SCOPE_ANNOTATION] !== 'all') return false;
    const rules = restoreRulesFor(await servedResources(opts.api));
    if (sameRules(role.rules ?? [], rules)) return false;
    await opts.kube.rbac.replaceClusterRole({ name: opts.name, body: { ...role, rules } });
    opts.logger.info({ clusterRole: opts.name, rules: rules.length }, 'restore ClusterRole updated to what the API server serves');
    return true;
  };
  return {
    refresh() {
      // Concurrent callers share one run.
      running ??= once().finally(() => (running = undefined));
      return running;
    },
  };
}
