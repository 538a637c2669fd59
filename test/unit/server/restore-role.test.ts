import type { V1ClusterRole } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/base/logger.js';
import type { Kube } from '../../../src/kube/client.js';
import type { ApiReader } from '../../../src/server/backup/api-reader.js';
import { restoreRoleKeeper, servedResources } from '../../../src/server/rbac/restore-role.js';

const discovery: Record<string, unknown> = {
  '/api/v1': {
    resources: [
      { name: 'pods', verbs: ['create', 'get', 'list'] },
      { name: 'pods/status', verbs: ['get', 'patch', 'update'] },
      { name: 'pods/exec', verbs: ['create', 'get'] },
      { name: 'nodes', verbs: ['create', 'get'] },
      { name: 'serviceaccounts', verbs: ['create'] },
      { name: 'serviceaccounts/token', verbs: ['create'] },
    ],
  },
  '/apis': { groups: [{ name: 'example.com', preferredVersion: { groupVersion: 'example.com/v1' } }, { name: 'down.example.com', preferredVersion: { groupVersion: 'down.example.com/v1' } }] },
  '/apis/example.com/v1': { resources: [{ name: 'widgets', verbs: ['create', 'list'] }] },
};
const api: ApiReader = {
  get: async <T>(path: string) => {
    if (!(path in discovery)) throw new Error(`503 on ${path}`);
    return discovery[path] as T;
  },
  tryGet: async <T>(path: string) => discovery[path] as T | undefined,
};

function fakeKube(role: V1ClusterRole) {
  const writes: V1ClusterRole[] = [];
  const kube = {
    rbac: {
      readClusterRole: async () => structuredClone(role),
      replaceClusterRole: async ({ body }: { body: V1ClusterRole }) => {
        writes.push(body);
        role.rules = body.rules ?? [];
        return body;
      },
    },
  } as unknown as Kube;
  return { kube, writes };
}

describe('the restore ClusterRole the server keeps', () => {
  it('discovery gives top-level resources with their status, and skips a group that does not answer', async () => {
    expect(await servedResources(api)).toEqual([
      { group: '', resource: 'pods', verbs: ['create', 'get', 'list'], statusUpdatable: true },
      { group: '', resource: 'nodes', verbs: ['create', 'get'], statusUpdatable: false },
      { group: '', resource: 'serviceaccounts', verbs: ['create'], statusUpdatable: false },
      { group: 'example.com', resource: 'widgets', verbs: ['create', 'list'], statusUpdatable: false },
    ]);
  });

  it('in the `all` scope it is rewritten to what the API serves, and not rewritten when nothing changed', async () => {
    const { kube, writes } = fakeKube({ metadata: { name: 'cairn-restore', annotations: { 'cairn.io/restore-scope': 'all' } } });
    const keeper = restoreRoleKeeper({ kube, api, name: 'cairn-restore', logger: createLogger({ level: 'fatal' }) });
    expect(await keeper.refresh()).toBe(true);
    expect(writes[0]?.rules).toEqual([
      { apiGroups: [''], resources: ['pods', 'serviceaccounts'], verbs: ['create', 'patch'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['update'] },
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['create', 'patch'] },
    ]);
    expect(await keeper.refresh()).toBe(false);
    expect(writes).toHaveLength(1);
  });

  it('a role install wrote from a listed scope is left alone', async () => {
    const { kube, writes } = fakeKube({ metadata: { name: 'cairn-restore', annotations: { 'cairn.io/restore-scope': 'listed' } }, rules: [] });
    const keeper = restoreRoleKeeper({ kube, api, name: 'cairn-restore', logger: createLogger({ level: 'fatal' }) });
    expect(await keeper.refresh()).toBe(false);
    expect(writes).toEqual([]);
  });
});
