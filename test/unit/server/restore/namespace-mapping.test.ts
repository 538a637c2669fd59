import { describe, expect, it } from 'vitest';
import { NamespaceMapping, namespaceMappingProblems } from '../../../../src/server/restore/namespace-mapping.js';

describe('namespace mapping', () => {
  it('maps listed namespaces and keeps the others', () => {
    const m = new NamespaceMapping({ app: 'app-copy' });
    expect(m.target('app')).toBe('app-copy');
    expect(m.target('db')).toBe('db');
    expect(m.isEmpty).toBe(false);
    expect(new NamespaceMapping(undefined).isEmpty).toBe(true);
  });

  it('rejects invalid names and two sources sharing one target', () => {
    expect(namespaceMappingProblems({ a: 'c', b: 'c', Bad_Name: 'ok', ok2: 'x'.repeat(64) })).toEqual([
      'namespaces "a" and "b" are both mapped to "c"',
      'invalid namespace mapping source "Bad_Name": not a valid namespace name',
      `invalid namespace mapping target "${'x'.repeat(64)}": not a valid namespace name`,
    ]);
    expect(namespaceMappingProblems({ a: 'b' })).toEqual([]);
  });
});
