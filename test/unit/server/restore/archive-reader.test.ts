import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { FORMAT_VERSION, FORMAT_VERSION_PATH, itemPath } from '../../../../src/server/archive/paths.js';
import { archiveItemKey, readBackupArchive } from '../../../../src/server/archive/reader.js';

type Entry = { name: string; body?: string; type?: 'file' | 'directory' | 'symlink' };

async function archive(entries: Entry[]): Promise<Buffer> {
  const tar = pack();
  const out = buffer(tar.pipe(createGzip()));
  for (const e of entries) {
    if (e.type === 'directory') tar.entry({ name: e.name, type: 'directory' });
    else if (e.type === 'symlink') tar.entry({ name: e.name, type: 'symlink', linkname: 'elsewhere' });
    else tar.entry({ name: e.name, mode: 0o755 }, e.body ?? '');
  }
  tar.finalize();
  return out;
}

const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'app' }, data: { a: '1' } };
const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } };

describe('backup archive reader', () => {
  it('reads the format version and the unversioned copy of each item', async () => {
    const data = await archive([
      { name: FORMAT_VERSION_PATH, body: `${FORMAT_VERSION}\n` },
      { name: itemPath({ groupResource: 'namespaces', name: 'app' }), body: JSON.stringify(ns) },
      { name: itemPath({ groupResource: 'namespaces', name: 'app', preferredVersion: 'v1' }), body: JSON.stringify(ns) },
      { name: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'settings' }), body: JSON.stringify(cm) },
      { name: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'settings', preferredVersion: 'v1' }), body: JSON.stringify(cm) },
    ]);
    const a = await readBackupArchive(Readable.from(data));
    expect(a.formatVersion).toBe('1.1.0');
    expect(a.warnings).toEqual([]);
    expect(a.items).toEqual([
      { groupResource: 'namespaces', name: 'app', object: ns },
      { groupResource: 'configmaps', namespace: 'app', name: 'settings', object: cm },
    ]);
  });

  it('warns about and skips what is not an item, without failing', async () => {
    const data = await archive([
      { name: 'resources/', type: 'directory' },
      { name: 'resources/configmaps/namespaces/app/broken.json', body: '{not json' },
      { name: 'resources/configmaps/namespaces/app/empty.json', body: '{"kind":"ConfigMap"}' },
      { name: 'resources/configmaps/weird/app/x.json', body: '{}' },
      { name: 'notes.txt', body: 'hello' },
      { name: 'resources/configmaps/namespaces/app/link.json', type: 'symlink' },
      { name: `./${itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'settings' })}`, body: JSON.stringify(cm) },
    ]);
    const a = await readBackupArchive(Readable.from(data));
    expect(a.formatVersion).toBeUndefined();
    expect(a.items.map((i) => i.name)).toEqual(['settings']);
    expect(a.warnings).toEqual([
      'ignored resources/configmaps/namespaces/app/broken.json: not valid JSON',
      'ignored resources/configmaps/namespaces/app/empty.json: not a Kubernetes object (apiVersion, kind and metadata.name are needed)',
      'ignored unexpected file resources/configmaps/weird/app/x.json in the backup archive',
      'ignored unexpected file notes.txt in the backup archive',
      'ignored symlink entry resources/configmaps/namespaces/app/link.json in the backup archive',
    ]);
  });

  it('refuses oversized entries with a warning', async () => {
    const data = await archive([{ name: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'big' }), body: JSON.stringify({ ...cm, data: { a: 'x'.repeat(2000) } }) }]);
    const a = await readBackupArchive(Readable.from(data), { maxEntryBytes: 1000 });
    expect(a.items).toEqual([]);
    expect(a.warnings[0]).toMatch(/^ignored resources\/configmaps\/namespaces\/app\/big\.json: \d+ bytes is more than the 1000 bytes/);
  });

  it('reads past the items its predicate refuses, before their bodies, and drops the parsed items keep refuses', async () => {
    const other = { ...cm, metadata: { name: 'settings', namespace: 'other' } };
    const data = await archive([
      { name: FORMAT_VERSION_PATH, body: `${FORMAT_VERSION}\n` },
      { name: itemPath({ groupResource: 'namespaces', name: 'app' }), body: JSON.stringify(ns) },
      { name: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'settings' }), body: JSON.stringify(cm) },
      { name: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'settings', preferredVersion: 'v1' }), body: JSON.stringify(cm) },
      { name: itemPath({ groupResource: 'configmaps', namespace: 'other', name: 'settings' }), body: JSON.stringify(other) },
      { name: itemPath({ groupResource: 'configmaps', namespace: 'other', name: 'broken' }), body: '{not json' },
      { name: itemPath({ groupResource: 'secrets', namespace: 'app', name: 'creds' }), body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'app' } }) },
    ]);
    const offered: string[] = [];
    const a = await readBackupArchive(Readable.from(data), {
      select: (ref) => {
        offered.push(archiveItemKey(ref));
        return ref.namespace !== 'other';
      },
      keep: (item) => item.object.kind !== 'Secret',
    });
    expect(offered).toEqual(['namespaces//app', 'configmaps/app/settings', 'configmaps/other/settings', 'configmaps/other/broken', 'secrets/app/creds']);
    expect(a.formatVersion).toBe('1.1.0');
    expect(a.warnings).toEqual([]);
    expect(a.items).toEqual([
      { groupResource: 'namespaces', name: 'app', object: ns },
      { groupResource: 'configmaps', namespace: 'app', name: 'settings', object: cm },
    ]);
    expect([...(a.present ?? [])]).toEqual(offered);
  });

  it('reads the items of some group-resources only, and nothing else', async () => {
    const data = await archive([
      { name: FORMAT_VERSION_PATH, body: `${FORMAT_VERSION}\n` },
      { name: 'notes.txt', body: 'hello' },
      { name: itemPath({ groupResource: 'namespaces', name: 'app' }), body: JSON.stringify(ns) },
      { name: itemPath({ groupResource: 'configmaps', namespace: 'app', name: 'settings' }), body: JSON.stringify(cm) },
    ]);
    const a = await readBackupArchive(Readable.from(data), { onlyGroupResources: ['configmaps'] });
    expect(a.formatVersion).toBeUndefined();
    expect(a.warnings).toEqual([]);
    expect(a.items.map((i) => i.name)).toEqual(['settings']);
  });

  it('fails on a stream that is not gzip', async () => {
    await expect(readBackupArchive(Readable.from(Buffer.from('plain text')))).rejects.toThrow(/header/);
  });
});
