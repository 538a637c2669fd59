import { describe, expect, it } from 'vitest';
import { tabwrite } from '../../../src/cli/tabwriter.js';

describe('tabwrite (Go text/tabwriter, padding 2)', () => {
  it('aligns a block of consecutive lines and restarts after a blank line', () => {
    const text = 'Name:\tnginx-backup\nNamespace:\tvelero\n\nPhase:\tCompleted';
    expect(tabwrite(text)).toBe('Name:       nginx-backup\nNamespace:  velero\n\nPhase:  Completed');
  });

  it('turns a leading tab into two spaces of indentation and aligns nested columns', () => {
    const text = 'Resources:\n\tIncluded:\t*\n\tExcluded:\t<none>\n\tCluster-scoped:\tauto';
    expect(tabwrite(text).split('\n')).toEqual(['Resources:', '  Included:        *', '  Excluded:        <none>', '  Cluster-scoped:  auto']);
  });

  it('widens columns with a space before the tab, as Velero does for some labels', () => {
    const text = 'Existing Resource Policy: \t<none>\nItemOperationTimeout:\t4h0m0s';
    expect(tabwrite(text).split('\n')).toEqual(['Existing Resource Policy:   <none>', 'ItemOperationTimeout:       4h0m0s']);
  });

  it('aligns continuation lines of a multi-value field to the value column', () => {
    const text = 'Labels:\tvelero.io/storage-location=default\nAnnotations:\ta=1\n\tb=2';
    expect(tabwrite(text).split('\n')).toEqual(['Labels:       velero.io/storage-location=default', 'Annotations:  a=1', '              b=2']);
  });
});
