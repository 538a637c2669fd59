/**
 * ServiceAccounts: the token Secrets (`<name>-token-xxxxx`) the old cluster generated are not carried over; the
 * target cluster makes its own.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

export function cleanServiceAccount(item: UnstructuredObject): UnstructuredObject {
  const sa = structuredClone(item);
  const prefix = `${sa.metadata.name}-token-`;
  if (Array.isArray(sa.secrets)) {
    const kept = (sa.secrets as { name?: string }[]).filter((s) => !s.name?.startsWith(prefix));
    if (kept.length) sa.secrets = kept;
    else delete sa.secrets;
  }
  return sa;
}

export const serviceAccountRestoreAction: RestoreItemAction = {
  name: 'velero.io/service-account',
  appliesTo: () => ({ includedResources: ['serviceaccounts'] }),
  execute: async (item) => ({ item: cleanServiceAccount(item) }),
};
