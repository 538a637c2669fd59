import { describe, expect, it } from 'vitest';
import { matchesLabelSelector } from '../../../src/api/index.js';

describe('matchesLabelSelector', () => {
  const labels = { app: 'web', env: 'prod' };
  it.each([
    [{}, true],
    [{ matchLabels: { app: 'web' } }, true],
    [{ matchLabels: { app: 'db' } }, false],
    [{ matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] }, true],
    [{ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['x'] }] }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'Like' }] }, false],
  ])('%j → %s', (selector, want) => {
    expect(matchesLabelSelector(labels, selector)).toBe(want);
  });
});
