import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_METRICS } from '../../../src/agent/metrics/definitions.js';
import { SERVER_METRICS } from '../../../src/server/metrics/definitions.js';

describe('docs/metrics.md', () => {
  const doc = readFileSync(new URL('../../../docs/metrics.md', import.meta.url), 'utf8');
  it('lists every metric with its type and labels', () => {
    for (const d of [...SERVER_METRICS, ...NODE_METRICS]) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${d.name}\` |`));
      expect(row, d.name).toBeDefined();
      expect(row).toContain(`| ${d.type} |`);
      expect(row).toContain(`| ${d.labelNames.length ? d.labelNames.join(', ') : '—'} |`);
      expect(row).toContain(`| ${d.help} |`);
    }
  });
});
