/**
 * The Helm chart's share of `install`'s objects, written into charts/cairn by `npm run generate:crds` and checked
 * by the build: the CRDs (crds/) and the RBAC rules (files/rbac.json, read by the templates with `.Files`), so the
 * chart grants exactly what `install` grants and defines exactly its CRDs; a test renders both and compares the
 * rest object by object.
 */
import { renderCrdFiles } from '../api/crd.js';
import { NEVER_RESTORED } from '../api/restore-scope.js';
import {
  NODE_AGENT_CLUSTER_RULES,
  NODE_AGENT_NAMESPACE_RULES,
  SERVER_CLUSTER_RULES,
  SERVER_NAMESPACE_RULES,
  SERVER_RBAC_RESTORE_RULES,
  serverRestoreRoleUpkeep,
  type ExplainedRule,
} from './rbac.js';

export interface ChartFile {
  path: string;
  content: string;
}

const CHART = 'charts/cairn';

const rules = (explained: readonly ExplainedRule[]) => explained.map((e) => e.rule);

export function renderChartFiles(): ChartFile[] {
  // Helm creates what is in crds/ when it is missing and never changes it; the chart's upgrade-CRDs hook applies
  // the same CRDs with `install --crds-only` on each install and upgrade.
  const crds = renderCrdFiles().map((f) => ({ path: `${CHART}/crds/${f.path.split('/').pop()!}`, content: f.content }));
  const rbac = {
    serverCluster: rules(SERVER_CLUSTER_RULES),
    // Added when the restore scope includes RBAC objects (the default, every resource, does).
    serverRbacRestore: rules(SERVER_RBAC_RESTORE_RULES),
    // Added in the default scope; the template fills in the restore ClusterRole's name.
    serverRestoreRoleUpkeep: rules(serverRestoreRoleUpkeep('RESTORE_ROLE')),
    // restoreResources entries the chart refuses, as install's --restore-resources does.
    neverRestored: NEVER_RESTORED,
    serverNamespace: rules(SERVER_NAMESPACE_RULES),
    nodeAgentCluster: rules(NODE_AGENT_CLUSTER_RULES),
    nodeAgentNamespace: rules(NODE_AGENT_NAMESPACE_RULES),
  };
  return [...crds, { path: `${CHART}/files/rbac.json`, content: `${JSON.stringify(rbac, null, 2)}\n` }];
}
