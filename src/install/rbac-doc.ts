/**
 * The generated parts of docs/rbac.md: each role's rules with their reasons, and the access matrix. They sit
 * between `<!-- generated:NAME -->` and `<!-- end:NAME -->` markers; `npm run generate:docs` rewrites them and a unit
 * test fails when the committed doc differs, so the doc cannot drift from what install grants.
 */
import { parseRestoreScope } from '../api/restore-scope.js';
import {
  NODE_AGENT_CLUSTER_RULES,
  NODE_AGENT_NAMESPACE_RULES,
  SERVER_CLUSTER_RULES,
  SERVER_NAMESPACE_RULES,
  SERVER_RBAC_RESTORE_RULES,
  restoreScopeRules,
  serverRestoreRoleUpkeep,
} from './rbac.js';
import { accessMatrixMarkdown, EXAMPLE_NARROW_SCOPE, rulesMarkdown } from './rbac-model.js';

export function rbacDocBlocks(): Record<string, string> {
  const narrow = parseRestoreScope([...EXAMPLE_NARROW_SCOPE]);
  return {
    'server-cluster': rulesMarkdown(SERVER_CLUSTER_RULES),
    'server-rbac-restore': rulesMarkdown(SERVER_RBAC_RESTORE_RULES),
    'server-restore-upkeep': rulesMarkdown(serverRestoreRoleUpkeep('cairn-restore')),
    'server-namespace': rulesMarkdown(SERVER_NAMESPACE_RULES),
    'restore-narrow': rulesMarkdown(restoreScopeRules(narrow)),
    'node-agent-cluster': rulesMarkdown(NODE_AGENT_CLUSTER_RULES),
    'node-agent-namespace': rulesMarkdown(NODE_AGENT_NAMESPACE_RULES),
    'access-matrix': accessMatrixMarkdown(narrow),
  };
}

/** The doc with every generated block replaced; throws when a block's markers are missing. */
export function withGeneratedBlocks(doc: string, blocks: Record<string, string> = rbacDocBlocks()): string {
  let out = doc;
  for (const [name, body] of Object.entries(blocks)) {
    const start = `<!-- generated:${name} -->`;
    const end = `<!-- end:${name} -->`;
    const a = out.indexOf(start);
    const b = out.indexOf(end);
    if (a < 0 || b < a) throw new Error(`docs/rbac.md has no ${start} … ${end} block`);
    out = `${out.slice(0, a + start.length)}\n${body}\n${out.slice(b)}`;
  }
  return out;
}
