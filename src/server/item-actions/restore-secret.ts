/**
 * Service-account token Secrets: the token, CA and namespace were issued by the old cluster for the old
 * ServiceAccount's UID. Restored as they are, the token controller deletes the Secret (its UID annotation names a
 * ServiceAccount that no longer exists); without them it issues a fresh token for the restored ServiceAccount.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const ISSUED_KEYS = ['token', 'ca.crt', 'namespace'];

export function cleanTokenSecret(item: UnstructuredObject): UnstructuredObject {
  if (item.type !== SERVICE_ACCOUNT_TOKEN_TYPE) return item;
  const secret = structuredClone(item);
  delete secret.metadata.annotations?.['kubernetes.io/service-account.uid'];
  const data = secret.data as Record<string, string> | undefined;
  if (data) {
    for (const k of ISSUED_KEYS) delete data[k];
    if (Object.keys(data).length === 0) delete secret.data;
  }
  return secret;
}

export const secretRestoreAction: RestoreItemAction = {
  name: 'velero.io/secret',
  appliesTo: () => ({ includedResources: ['secrets'] }),
  execute: async (item) => ({ item: cleanTokenSecret(item) }),
};
