/** The admin kubeconfig: certificates embedded, so the file works when copied elsewhere. */
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { Pki } from './pki.js';

export const CONTEXT_NAME = 'cairn-local';

export function writeAdminKubeconfig(opts: { path: string; apiServerUrl: string; pki: Pki }): void {
  const b64 = (file: string) => readFileSync(file).toString('base64');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CONTEXT_NAME, cluster: { server: opts.apiServerUrl, 'certificate-authority-data': b64(opts.pki.caCert) } }],
    users: [{ name: 'cairn-admin', user: { 'client-certificate-data': b64(opts.pki.adminCert), 'client-key-data': b64(opts.pki.adminKey) } }],
    contexts: [{ name: CONTEXT_NAME, context: { cluster: CONTEXT_NAME, user: 'cairn-admin', namespace: 'default' } }],
    'current-context': CONTEXT_NAME,
    preferences: {},
  };
  writeFileSync(opts.path, stringify(doc), { mode: 0o600 });
}
