/**
 * Services: the cluster IP is allocated by the target cluster (the old one may be taken or outside its range);
 * node ports too, unless the Restore says `preserveNodePorts`. Headless services keep `clusterIP: None`.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: { nodePort?: number }[];
  healthCheckNodePort?: number;
}

export function cleanService(item: UnstructuredObject, preserveNodePorts: boolean): UnstructuredObject {
  const svc = structuredClone(item);
  const spec = (svc.spec ?? {}) as ServiceSpec;
  if (spec.clusterIP !== 'None') {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  if (!preserveNodePorts) {
    for (const p of spec.ports ?? []) delete p.nodePort;
    delete spec.healthCheckNodePort;
  }
  svc.spec = spec;
  return svc;
}

export const serviceRestoreAction: RestoreItemAction = {
  name: 'velero.io/service',
  appliesTo: () => ({ includedResources: ['services'] }),
  execute: async (item, ctx) => ({ item: cleanService(item, ctx.restore.spec.preserveNodePorts === true) }),
};
