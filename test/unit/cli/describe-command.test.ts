/** The describe commands' shared printing: text blocks, one object or a List as JSON/YAML, "No … found". */
import { describe, expect, it } from 'vitest';
import { renderDescriptions } from '../../../src/cli/describe/command.js';

const base = { kind: 'backups', text: (o: { n: string }) => `Name: ${o.n}`, data: (o: { n: string }) => ({ name: o.n }) };

describe('renderDescriptions', () => {
  it('prints text blocks apart from each other, and says when there is none', async () => {
    expect(await renderDescriptions({ ...base, objects: [{ n: 'a' }, { n: 'b' }], names: [], output: 'table' })).toBe('Name: a\n\nName: b');
    expect(await renderDescriptions({ ...base, objects: [], names: [], output: 'table' })).toBe('No backups found');
  });

  it('prints one named object alone and anything else as a List', async () => {
    expect(JSON.parse(await renderDescriptions({ ...base, objects: [{ n: 'a' }], names: ['a'], output: 'json' }))).toEqual({ name: 'a' });
    expect(JSON.parse(await renderDescriptions({ ...base, objects: [{ n: 'a' }], names: [], output: 'json' }))).toEqual({ apiVersion: 'v1', kind: 'List', items: [{ name: 'a' }] });
    expect(await renderDescriptions({ ...base, objects: [], names: [], output: 'yaml' })).toContain('kind: List');
  });
});
