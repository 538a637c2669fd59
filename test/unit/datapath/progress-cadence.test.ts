import { describe, expect, it } from 'vitest';
import { ProgressCadence } from '../../../src/datapath/progress-cadence.js';

describe('ProgressCadence', () => {
  it('answers once per interval, and always when forced', () => {
    let now = 1_000;
    const cadence = new ProgressCadence(250, () => now);
    expect(cadence.due(false)).toBe(true);
    now += 100;
    expect(cadence.due(false)).toBe(false);
    expect(cadence.due(true)).toBe(true);
    now += 249;
    expect(cadence.due(false)).toBe(false);
    now += 1;
    expect(cadence.due(false)).toBe(true);
  });
});
