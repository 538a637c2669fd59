import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  buildContainerEnv,
  EnvResolutionError,
  expandVars,
  fieldRefValue,
  parseQuantity,
  resourceFieldValue,
  type EnvSourceLookup,
  type NodeFacts,
} from '../../../tools/local-cluster/kubelet/env.js';

const node: NodeFacts = { nodeName: 'local-node-1', nodeIp: '127.0.0.2', allocatableCpu: '8', allocatableMemory: '16Gi' };
const pod: V1Pod = {
  metadata: { name: 'p', namespace: 'ns1', uid: 'u-1', labels: { app: 'web', tier: 'x' }, annotations: { a: 'b' } },
  spec: { nodeName: 'local-node-1', serviceAccountName: 'sa', containers: [{ name: 'c' }] },
};
const lookup: EnvSourceLookup = {
  secret: (_ns, name) => Promise.resolve(name === 'creds' ? { USER: 'u', PASS: 'p' } : undefined),
  configMap: (_ns, name) => Promise.resolve(name === 'cfg' ? { MODE: 'fast', LEVEL: '3' } : undefined),
};

describe('$(VAR) expansion', () => {
  const vars = new Map([['A', 'x'], ['B', 'y']]);
  it.each([
    ['$(A)-$(B)', 'x-y'],
    ['$(MISSING)', '$(MISSING)'],
    ['$$(A)', '$(A)'],
    ['$$$(A)', '$x'],
    ['cost $5', 'cost $5'],
    ['$(A', '$(A'],
    ['end$', 'end$'],
  ])('%s → %s', (input, out) => {
    expect(expandVars(input, vars)).toBe(out);
  });
});

describe('downward API and resources', () => {
  it('reads pod fields', () => {
    expect(fieldRefValue(pod, 'metadata.name', node)).toBe('p');
    expect(fieldRefValue(pod, 'metadata.namespace', node)).toBe('ns1');
    expect(fieldRefValue(pod, "metadata.labels['app']", node)).toBe('web');
    expect(fieldRefValue(pod, 'metadata.labels', node)).toBe('app="web"\ntier="x"');
    expect(fieldRefValue(pod, 'status.podIP', node)).toBe('127.0.0.2');
    expect(fieldRefValue(pod, 'spec.serviceAccountName', node)).toBe('sa');
    expect(() => fieldRefValue(pod, 'spec.bogus', node)).toThrow(EnvResolutionError);
  });

  it('parses quantities and rounds resource values up to divisors', () => {
    expect(parseQuantity('500m')).toBeCloseTo(0.5);
    expect(parseQuantity('128Mi')).toBe(128 * 2 ** 20);
    expect(parseQuantity('1G')).toBe(1e9);
    const c: V1Container = { name: 'c', resources: { limits: { cpu: '500m', memory: '64Mi' } } };
    expect(resourceFieldValue(c, 'limits.cpu', undefined, node)).toBe('1');
    expect(resourceFieldValue(c, 'limits.cpu', '1m', node)).toBe('500');
    expect(resourceFieldValue(c, 'limits.memory', '1Mi', node)).toBe('64');
    expect(resourceFieldValue({ name: 'c' }, 'limits.cpu', undefined, node)).toBe('8');
  });
});

describe('container environment', () => {
  it('applies envFrom, then env in order with expansion of earlier variables', async () => {
    const container: V1Container = {
      name: 'c',
      envFrom: [{ configMapRef: { name: 'cfg' } }, { prefix: 'S_', secretRef: { name: 'creds' } }],
      env: [
        { name: 'GREETING', value: 'hello $(S_USER) in $(MODE)' },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'BOTH', value: '$(POD)/$(GREETING)/$(LATER)' },
        { name: 'LATER', value: 'l' },
        { name: 'PW', valueFrom: { secretKeyRef: { name: 'creds', key: 'PASS' } } },
        { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } },
        { name: 'MODE', value: 'slow' },
      ],
    };
    const env = await buildContainerEnv({ pod, container, node, lookup, base: new Map([['PATH', '/bin']]) });
    expect(Object.fromEntries(env)).toEqual({
      PATH: '/bin',
      MODE: 'slow',
      LEVEL: '3',
      S_USER: 'u',
      S_PASS: 'p',
      GREETING: 'hello u in fast',
      POD: 'p',
      BOTH: 'p/hello u in fast/$(LATER)',
      LATER: 'l',
      PW: 'p',
    });
  });

  it('a missing non-optional secret is a CreateContainerConfigError', async () => {
    const container: V1Container = { name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'gone', key: 'k' } } }] };
    await expect(buildContainerEnv({ pod, container, node, lookup, base: new Map() })).rejects.toMatchObject({
      reason: 'CreateContainerConfigError',
      message: 'secret "gone" not found',
    });
  });
});
