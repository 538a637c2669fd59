/**
 * Golden: the plugins a ServerStatusRequest reports, as `velero plugin get` prints them for a cairn server. Velero
 * sorts status.plugins by kind then name (pkg/cmd/util/output/plugin_printer.go) and prints NAME and KIND through
 * the Kubernetes table printer (tabwriter padding 3); the kinds are Velero's (pkg/plugin/framework/common).
 */
import { describe, expect, it } from 'vitest';
import type { Kube } from '../../../src/kube/client.js';
import { PluginKinds } from '../../../src/plugins/external/kinds.js';
import { serverStatusRequestReconciler } from '../../../src/server/server-status-request-controller.js';
import { createLogger } from '../../../src/base/logger.js';

/** Just enough of the custom-objects API for one object. */
function fakeKube(obj: Record<string, unknown>): { kube: Kube; current: () => Record<string, unknown> } {
  let current = structuredClone(obj);
  const replace = async ({ body }: { body: Record<string, unknown> }) => {
    current = structuredClone(body);
    return structuredClone(current);
  };
  const custom = { getNamespacedCustomObject: async () => structuredClone(current), replaceNamespacedCustomObjectStatus: replace, replaceNamespacedCustomObject: replace };
  return { kube: { custom } as unknown as Kube, current: () => current };
}

/** `velero plugin get`: sort by kind then name, then the table printer's columns. */
function veleroPluginGet(plugins: { name: string; kind: string }[]): string {
  const rows = [...plugins].sort((a, b) => (a.kind !== b.kind ? (a.kind < b.kind ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const width = Math.max(6, ...['NAME', ...rows.map((r) => r.name)].map((n) => n.length + 3));
  return ['NAME'.padEnd(width) + 'KIND', ...rows.map((r) => r.name.padEnd(width) + r.kind)].join('\n') + '\n';
}

const EXPECTED = `NAME                                           KIND
cairn.io/custom-resource-definition            BackupItemAction
cairn.io/pv-claim                              BackupItemAction
velero.io/pod                                  BackupItemAction
velero.io/pv                                   BackupItemAction
velero.io/service-account                      BackupItemAction
velero.io/aws                                  ObjectStore
velero.io/filesystem                           ObjectStore
cairn.io/pv-claim-ref                          RestoreItemAction
velero.io/change-image-name                    RestoreItemAction
velero.io/change-storage-class                 RestoreItemAction
velero.io/cluster-role-bindings                RestoreItemAction
velero.io/init-restore-hook                    RestoreItemAction
velero.io/job                                  RestoreItemAction
velero.io/pod                                  RestoreItemAction
velero.io/pod-volume-restore                   RestoreItemAction
velero.io/pvc                                  RestoreItemAction
velero.io/role-bindings                        RestoreItemAction
velero.io/secret                               RestoreItemAction
velero.io/service                              RestoreItemAction
velero.io/service-account                      RestoreItemAction
velero.io/csi-pvc-restorer                     RestoreItemActionV2
velero.io/csi-volumesnapshot-restorer          RestoreItemActionV2
velero.io/csi-volumesnapshotclass-restorer     RestoreItemActionV2
velero.io/csi-volumesnapshotcontent-restorer   RestoreItemActionV2
`;

describe('ServerStatusRequest plugins', () => {
  it('lists the built-in actions and object stores with Velero kinds, as `velero plugin get` prints them', async () => {
    const ssr = { apiVersion: 'velero.io/v1', kind: 'ServerStatusRequest', metadata: { name: 's1', namespace: 'velero' }, spec: {} };
    const { kube, current } = fakeKube(ssr);
    const reconcile = serverStatusRequestReconciler({ kube, namespace: 'velero', logger: createLogger({ level: 'fatal' }), version: 'v0.1.0', now: () => new Date('2025-10-01T10:00:00.750Z') });
    await reconcile({ namespace: 'velero', name: 's1' });
    const status = current().status as { phase: string; processedTimestamp: string; serverVersion: string; plugins: { name: string; kind: string }[] };
    expect(status.phase).toBe('Processed');
    expect(status.processedTimestamp).toBe('2025-10-01T10:00:00Z');
    expect(veleroPluginGet(status.plugins)).toBe(EXPECTED);
    for (const p of status.plugins) expect(PluginKinds).toContain(p.kind);
  });
});
