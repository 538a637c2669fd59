import { describe, expect, it } from 'vitest';
import { formatAge, formatJson, formatTable, formatYaml, render } from '../../../src/cli/output.js';

interface Row { name: string; phase: string }
const columns = [
  { header: 'name', value: (r: Row) => r.name },
  { header: 'phase', value: (r: Row) => r.phase },
];

describe('output rendering', () => {
  it('prints Velero-style tables: upper-case headers, aligned columns, no trailing spaces', () => {
    const text = formatTable(columns, [{ name: 'nightly-1', phase: 'Completed' }, { name: 'b', phase: 'Failed' }]);
    expect(text.split('\n')).toEqual(['NAME        PHASE', 'nightly-1   Completed', 'b           Failed']);
  });

  it('prints just the header for an empty table', () => {
    expect(formatTable(columns, [])).toBe('NAME   PHASE');
  });

  it('renders the same value as json and yaml', () => {
    const value = { kind: 'Backup', spec: { ttl: '720h0m0s', includedNamespaces: ['a'] } };
    expect(JSON.parse(render('json', value, () => ''))).toEqual(value);
    expect(render('yaml', value, () => '')).toBe(formatYaml(value));
    expect(formatYaml(value)).toContain('ttl: 720h0m0s');
    expect(formatJson(value)).toContain('\n  "kind": "Backup"');
  });

  it('uses the table renderer for table output', () => {
    expect(render('table', 3, (n) => `n=${n}`)).toBe('n=3');
  });

  it('formats ages like kubectl', () => {
    const now = new Date('2026-01-01T12:00:00Z');
    expect(formatAge(new Date('2026-01-01T11:59:30Z'), now)).toBe('30s');
    expect(formatAge(new Date('2026-01-01T11:55:00Z'), now)).toBe('5m');
    expect(formatAge(new Date('2026-01-01T10:30:00Z'), now)).toBe('1h30m');
    expect(formatAge(new Date('2025-12-30T10:00:00Z'), now)).toBe('2d2h');
    expect(formatAge(undefined, now)).toBe('<unknown>');
  });
});
