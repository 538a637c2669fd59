import { createReadStream } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { readBackupArchive } from '../../../../src/server/archive/reader.js';
import { BackupArchiveWriter } from '../../../../src/server/archive/writer.js';
import { readTarGz } from './tar.js';

const writers: BackupArchiveWriter[] = [];
afterEach(async () => {
  for (const w of writers.splice(0)) await w.dispose();
});

async function archiveOf(items: Parameters<BackupArchiveWriter['addItem']>[0][]) {
  const w = await BackupArchiveWriter.create();
  writers.push(w);
  for (const i of items) await w.addItem(i);
  const done = await w.finish();
  return { done, entries: await readTarGz(done.path) };
}

describe('backup archive writer (docs/backup.md)', () => {
  it('writes metadata/version first with "1.1.0\\n"', async () => {
    const { entries } = await archiveOf([]);
    expect(entries.map((e) => e.name)).toEqual(['metadata/version']);
    expect(entries[0]?.body).toBe('1.1.0\n');
  });

  it('writes each item twice: the plain path and the <version>-preferredversion copy, as compact JSON', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'app' }, spec: { containers: [] } };
    const pv = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pvc-1234' } };
    const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'app' } };
    const { entries, done } = await archiveOf([
      { groupResource: 'pods', namespace: 'app', name: 'web-1', version: 'v1', object: pod },
      { groupResource: 'persistentvolumes', name: 'pvc-1234', version: 'v1', object: pv },
      { groupResource: 'deployments.apps', namespace: 'app', name: 'web', version: 'v1', object: deploy },
    ]);
    expect(done.items).toBe(3);
    expect(entries.map((e) => e.name)).toEqual([
      'metadata/version',
      'resources/pods/namespaces/app/web-1.json',
      'resources/pods/v1-preferredversion/namespaces/app/web-1.json',
      'resources/persistentvolumes/cluster/pvc-1234.json',
      'resources/persistentvolumes/v1-preferredversion/cluster/pvc-1234.json',
      'resources/deployments.apps/namespaces/app/web.json',
      'resources/deployments.apps/v1-preferredversion/namespaces/app/web.json',
    ]);
    expect(entries[1]?.body).toBe(JSON.stringify(pod));
    expect(entries[2]?.body).toBe(JSON.stringify(pod));
    expect(JSON.parse(entries[5]?.body ?? '')).toEqual(deploy);
  });

  it('has only regular files with mode 0755 and relative names', async () => {
    const { entries } = await archiveOf([{ groupResource: 'configmaps', namespace: 'a', name: 'c', version: 'v1', object: { metadata: { name: 'c' } } }]);
    for (const e of entries) {
      expect(e.type).toBe('file');
      expect(e.mode).toBe(0o755);
      expect(e.name.startsWith('/') || e.name.startsWith('./')).toBe(false);
    }
  });

  it('keeps long names intact (PAX headers)', async () => {
    const name = 'x'.repeat(200);
    const { entries } = await archiveOf([{ groupResource: 'widgets.example.com', namespace: 'ns', name, version: 'v1alpha1', object: { metadata: { name } } }]);
    expect(entries.map((e) => e.name)).toContain(`resources/widgets.example.com/v1alpha1-preferredversion/namespaces/ns/${name}.json`);
  });
});

describe('the restore side reads what backup writes', () => {
  it('round-trips items through readBackupArchive without warnings', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'app' } };
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' } };
    const { done } = await archiveOf([
      { groupResource: 'pods', namespace: 'app', name: 'web-1', version: 'v1', object: pod },
      { groupResource: 'customresourcedefinitions.apiextensions.k8s.io', name: 'widgets.example.com', version: 'v1', object: crd },
    ]);
    const archive = await readBackupArchive(createReadStream(done.path));
    expect(archive.formatVersion).toBe('1.1.0');
    expect(archive.warnings).toEqual([]);
    expect(archive.items).toEqual([
      { groupResource: 'pods', namespace: 'app', name: 'web-1', object: pod },
      { groupResource: 'customresourcedefinitions.apiextensions.k8s.io', name: 'widgets.example.com', object: crd },
    ]);
  });
});
