import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClusterError, UsageError } from '../../../src/base/errors.js';
import { PooledKubeConfig } from '../../../src/kube/pooled-config.js';
import { loadKubeConfig } from '../../../src/kube/config.js';

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "${server}"}
- name: c2
  cluster: {server: "https://other:6443"}
contexts:
- name: one
  context: {cluster: c1, user: u}
- name: two
  context: {cluster: c2, user: u}
current-context: one
users:
- name: u
  user: {token: t}
`;

function tempFile(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-kc-'));
  const f = join(dir, 'config');
  writeFileSync(f, content);
  return f;
}

describe('kubeconfig loading', () => {
  const emptyHome = mkdtempSync(join(tmpdir(), 'cairn-home-'));

  it('fails clearly when nothing is configured, never falling back to localhost:8080', () => {
    expect(() => loadKubeConfig({}, { HOME: emptyHome })).toThrow(ClusterError);
    expect(() => loadKubeConfig({}, { HOME: emptyHome })).toThrow(/no cluster configured: pass --kubeconfig/);
  });

  it('uses --kubeconfig over KUBECONFIG', () => {
    const a = tempFile(kubeconfig('https://a:6443'));
    const b = tempFile(kubeconfig('https://b:6443'));
    expect(loadKubeConfig({ kubeconfig: a }, { KUBECONFIG: b, HOME: emptyHome }).getCurrentCluster()?.server).toBe('https://a:6443');
    expect(loadKubeConfig({}, { KUBECONFIG: b, HOME: emptyHome }).getCurrentCluster()?.server).toBe('https://b:6443');
    // Its requests share kept-alive connections.
    expect(loadKubeConfig({ kubeconfig: a }, { HOME: emptyHome })).toBeInstanceOf(PooledKubeConfig);
  });

  it('names the flag when the kubeconfig file does not exist', () => {
    expect(() => loadKubeConfig({ kubeconfig: '/nope/config' }, { HOME: emptyHome })).toThrow(UsageError);
    expect(() => loadKubeConfig({ kubeconfig: '/nope/config' }, { HOME: emptyHome })).toThrow(/^--kubeconfig: file not found/);
  });

  it('switches context with --context and rejects unknown ones', () => {
    const f = tempFile(kubeconfig('https://a:6443'));
    expect(loadKubeConfig({ kubeconfig: f, context: 'two' }).getCurrentCluster()?.server).toBe('https://other:6443');
    expect(() => loadKubeConfig({ kubeconfig: f, context: 'three' })).toThrow(/--context: context "three" not found/);
  });

  it('reports an unreadable kubeconfig as a cluster error', () => {
    const f = tempFile('::: not yaml [');
    expect(() => loadKubeConfig({ kubeconfig: f })).toThrow(ClusterError);
  });
});
