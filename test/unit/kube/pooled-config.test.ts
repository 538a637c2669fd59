import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import { HttpMethod, RequestContext } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { PooledKubeConfig } from '../../../src/kube/pooled-config.js';

function config(): PooledKubeConfig {
  const kc = new PooledKubeConfig();
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'exec-token' } });
  kc.loadFromOptions({
    clusters: [
      { name: 'one', server: 'https://127.0.0.1:6443', skipTLSVerify: true },
      { name: 'two', server: 'https://127.0.0.2:6443', skipTLSVerify: true },
      { name: 'plain', server: 'http://127.0.0.3:8080', skipTLSVerify: true },
    ],
    users: [
      { name: 'admin', token: 'a-token' },
      { name: 'exec', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/echo', args: [credential], interactiveMode: 'Never' } },
    ],
    contexts: [
      { name: 'first', cluster: 'one', user: 'admin' },
      { name: 'second', cluster: 'two', user: 'admin' },
      { name: 'execd', cluster: 'one', user: 'exec' },
      { name: 'http', cluster: 'plain', user: 'admin' },
    ],
    currentContext: 'first',
  });
  return kc;
}

async function dispatcherOf(kc: PooledKubeConfig): Promise<unknown> {
  const context = new RequestContext(`${kc.getCurrentCluster()?.server ?? ''}/api`, HttpMethod.GET);
  await kc.applySecurityAuthentication(context);
  return context.getDispatcher();
}

/** Moves kc to the second cluster's context: `poolOf` must then give a pool other than `first`, and keep giving it. */
async function expectOwnPoolOnSecondCluster<T>(kc: PooledKubeConfig, first: T, poolOf: (kc: PooledKubeConfig) => Promise<T>): Promise<void> {
  kc.setCurrentContext('second');
  const second = await poolOf(kc);
  expect(second).not.toBe(first);
  expect(await poolOf(kc)).toBe(second);
}

describe('PooledKubeConfig', () => {
  it('gives every request for one cluster and user the same connection pool', async () => {
    const kc = config();
    const first = await dispatcherOf(kc);
    expect(first).toBeDefined();
    expect(await dispatcherOf(kc)).toBe(first);
    expect(await dispatcherOf(kc)).toBe(first);
  });

  it('starts a new pool when the context names another cluster, and keeps that one', async () => {
    const kc = config();
    const first = await dispatcherOf(kc);
    await expectOwnPoolOnSecondCluster(kc, first, dispatcherOf);
  });

  it('does not pool for a user whose credentials an exec plugin hands out', async () => {
    const kc = config();
    kc.setCurrentContext('execd');
    expect(await dispatcherOf(kc)).not.toBe(await dispatcherOf(kc));
  });
});

async function agentOf(kc: PooledKubeConfig): Promise<RequestOptions['agent']> {
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return opts.agent;
}

describe('PooledKubeConfig for node:https requests', () => {
  it('gives every request one keep-alive agent for one cluster and user, with the TLS options client-node chose', async () => {
    const kc = config();
    const first = await agentOf(kc);
    expect(first).toBeInstanceOf(HttpsAgent);
    expect((first as HttpsAgent & { keepAlive?: boolean }).keepAlive).toBe(true);
    expect((first as HttpsAgent & { options: { rejectUnauthorized?: boolean } }).options.rejectUnauthorized).toBe(false);
    expect(await agentOf(kc)).toBe(first);
    await expectOwnPoolOnSecondCluster(kc, first, agentOf);
  });

  it('leaves plain HTTP clusters the agent client-node chose', async () => {
    const kc = config();
    kc.setCurrentContext('http');
    expect(await agentOf(kc)).not.toBeInstanceOf(HttpsAgent);
  });
});
