import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_AGENT_CLUSTER_RULES, NODE_AGENT_NAMESPACE_RULES, SERVER_CLUSTER_RULES, SERVER_NAMESPACE_RULES, SERVER_RBAC_RESTORE_RULES } from '../../../src/install/rbac.js';
import { withGeneratedBlocks } from '../../../src/install/rbac-doc.js';

describe('docs/rbac.md', () => {
  const doc = readFileSync(new URL('../../../docs/rbac.md', import.meta.url), 'utf8');

  it('holds the rules and the access matrix exactly as generated from the code (npm run generate:docs)', () => {
    expect(doc).toBe(withGeneratedBlocks(doc));
  });

  it.each([
    ['server cluster', SERVER_CLUSTER_RULES],
    ['server RBAC restore', SERVER_RBAC_RESTORE_RULES],
    ['server namespace', SERVER_NAMESPACE_RULES],
    ['node-agent cluster', NODE_AGENT_CLUSTER_RULES],
    ['node-agent namespace', NODE_AGENT_NAMESPACE_RULES],
  ])('explains every %s rule', (_name, rules) => {
    for (const r of rules) expect(doc).toContain(r.why);
  });
});
