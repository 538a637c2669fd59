import { describe, expect, it } from 'vitest';

describe('runtime', () => {
  it('runs the npm scripts on the bundled Node.js 24', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });
});
