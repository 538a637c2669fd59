import { Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { newBackup } from '../../../src/api/index.js';
import { createLogger } from '../../../src/base/logger.js';
import { ItemActionRegistry } from '../../../src/plugins/item-actions/registry.js';
import type { UnstructuredObject } from '../../../src/plugins/item-actions/types.js';
import { itemPath } from '../../../src/server/archive/paths.js';
import { runDeleteItemActions } from '../../../src/server/delete-item-actions.js';
import type { BackupStore } from '../../../src/storage/backup-store.js';
import { writeTarGz } from './backup/tar.js';

const cm = (namespace: string, name: string, labels?: Record<string, string>): UnstructuredObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels ? { labels } : {}) } });

describe('delete item actions', () => {
  it('see the items they apply to; the others are never parsed', async () => {
    const data = await writeTarGz([
      { path: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'a' }), body: JSON.stringify(cm('app', 'a', { keep: 'no' })) },
      { path: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'b' }), body: JSON.stringify(cm('app', 'b')) },
      { path: itemPath({ groupResource: 'configmaps', namespace: 'other', name: 'broken' }), body: '{not json' },
      { path: itemPath({ groupResource: 'secrets', namespace: 'app', name: 'broken' }), body: '{not json' },
    ]);
    const seen: string[] = [];
    const registry = new ItemActionRegistry().registerDeleteAction({
      name: 'example/cleanup',
      appliesTo: () => ({ includedResources: ['configmaps'], includedNamespaces: ['app'], labelSelector: { matchLabels: { keep: 'no' } } }),
      execute: async (item) => void seen.push(`${item.metadata.namespace}/${item.metadata.name}`),
    });
    const store = { getBackupContents: async () => Readable.from(data) } as unknown as BackupStore;
    const parse = vi.spyOn(JSON, 'parse');
    let parsed: unknown[];
    const out = await runDeleteItemActions({ backup: newBackup({ name: 'b1' }), store, registry, log: createLogger({ level: 'fatal' }) }).finally(() => {
      parsed = parse.mock.calls.map(([text]) => text);
      parse.mockRestore();
    });
    expect(parsed!).toEqual([JSON.stringify(cm('app', 'a', { keep: 'no' })), JSON.stringify(cm('app', 'b'))]);
    expect(out).toEqual({ executed: 1, failed: 0 });
    expect(seen).toEqual(['app/a']);
    expect(registry.deleteActionsMayApply({ groupResource: 'configmaps', namespace: 'app' })).toBe(true);
    expect(registry.deleteActionsMayApply({ groupResource: 'configmaps', namespace: 'other' })).toBe(false);
    expect(registry.deleteActionsMayApply({ groupResource: 'secrets', namespace: 'app' })).toBe(false);
  });
});
