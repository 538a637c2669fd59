import { describe, expect, it } from 'vitest';
import { formatLabelSelector, parseLabelSelector, parseOrSelectors } from '../../../src/cli/label-selector.js';

describe('label selectors', () => {
  it('parses every form kubectl accepts', () => {
    expect(parseLabelSelector('-l', 'app=web, tier!=cache,env in (prod, staging),!legacy,debug,team==a')).toEqual({
      matchLabels: { app: 'web', team: 'a' },
      matchExpressions: [
        { key: 'tier', operator: 'NotIn', values: ['cache'] },
        { key: 'env', operator: 'In', values: ['prod', 'staging'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'debug', operator: 'Exists' },
      ],
    });
  });

  it('formats selectors as Velero prints them', () => {
    expect(formatLabelSelector(parseLabelSelector('-l', 'b=2,a=1,x notin (y)'))).toBe('a=1,b=2,x notin (y)');
    expect(formatLabelSelector(undefined)).toBe('<none>');
  });

  it('splits --or-selector alternatives', () => {
    expect(parseOrSelectors('--or-selector', 'app=a or app=b')).toEqual([{ matchLabels: { app: 'a' } }, { matchLabels: { app: 'b' } }]);
  });

  it.each(['app=we b', 'a=1,a=2', 'in (x)', '', 'app=-bad-'])('rejects %j naming the flag', (text) => {
    expect(() => parseLabelSelector('--selector', text)).toThrow(/^--selector: invalid selector/);
  });
});
