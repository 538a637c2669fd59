import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import { UsageError } from '../../../src/base/errors.js';
import { installManifests } from '../../../src/install/manifests.js';
import { parseInstallFlags } from '../../../src/install/options.js';
import { installedPluginImages, pluginContainerName, withPlugin, withoutPlugin } from '../../../src/install/plugins.js';
import { sortPlugins } from '../../../src/cli/plugins.js';

const serverOf = (objects: { kind?: string }[]) => objects.find((o) => o.kind === 'Deployment') as V1Deployment;

describe('plugin images', () => {
  it.each([
    ['velero/velero-plugin-for-aws:v1.14.3', 'velero-velero-plugin-for-aws'],
    ['velero-plugin-for-aws', 'velero-plugin-for-aws'],
    ['registry.example.com:5000/team/my_plugin.x:1.0', 'team-my-plugin-x'],
    ['gcr.io/velero-gcp/velero-plugin-for-gcp@sha256:abc', 'velero-gcp-velero-plugin-for-gcp'],
    ['/local/plugin', 'local-plugin'],
  ])('%s runs as init container %s (Velero naming)', (image, name) => {
    expect(pluginContainerName(image)).toBe(name);
  });

  it('install --plugins: an init container per image copying into the plugins volume the server mounts at /plugins', () => {
    const options = parseInstallFlags({ namespace: 'velero', image: 'cairn/cairn:dev', plugins: ['velero/velero-plugin-for-aws:v1.14.3,velero/velero-plugin-for-gcp:v1.14.2'], 'prefer-plugin': ['aws'] });
    const d = serverOf(installManifests(options).objects);
    const spec = d.spec!.template.spec!;
    // The server pod's restrictions hold for its init containers too (the namespace may enforce `restricted`).
    const restricted = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };
    expect(spec.initContainers).toEqual([
      { name: 'velero-velero-plugin-for-aws', image: 'velero/velero-plugin-for-aws:v1.14.3', imagePullPolicy: 'IfNotPresent', securityContext: restricted, volumeMounts: [{ name: 'plugins', mountPath: '/target' }] },
      { name: 'velero-velero-plugin-for-gcp', image: 'velero/velero-plugin-for-gcp:v1.14.2', imagePullPolicy: 'IfNotPresent', securityContext: restricted, volumeMounts: [{ name: 'plugins', mountPath: '/target' }] },
    ]);
    expect(spec.volumes).toContainEqual({ name: 'plugins', emptyDir: {} });
    expect(spec.containers[0]!.volumeMounts).toContainEqual({ name: 'plugins', mountPath: '/plugins' });
    expect(spec.containers[0]!.args).toContain('--prefer-plugin=velero.io/aws');
    // The node agent runs no plugins.
    const agent = installManifests({ ...options, useNodeAgent: true }).objects.find((o) => o.kind === 'DaemonSet') as V1Deployment;
    expect(agent.spec!.template.spec!.initContainers).toBeUndefined();
  });

  it('install without plugins still gives the server its plugins volume, so plugin add only adds an init container', () => {
    const d = serverOf(installManifests(parseInstallFlags({ namespace: 'velero', image: 'cairn/cairn:dev' })).objects);
    expect(d.spec!.template.spec!.initContainers).toBeUndefined();
    expect(d.spec!.template.spec!.containers[0]!.volumeMounts).toContainEqual({ name: 'plugins', mountPath: '/plugins' });
  });

  it('a provider no built-in serves needs --plugins; its config and credentials are left to the plugin', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-install-'));
    const key = join(dir, 'sa.json');
    writeFileSync(key, '{"type":"service_account"}');
    const gcp = { namespace: 'velero', image: 'i', provider: 'gcp', bucket: 'my_bucket', 'secret-file': key, 'backup-location-config': 'serviceAccount=x@y' };
    expect(() => parseInstallFlags(gcp)).toThrow(UsageError);
    expect(() => parseInstallFlags(gcp)).toThrow(/not built in .* --plugins IMAGE/);
    const options = parseInstallFlags({ ...gcp, plugins: ['velero/velero-plugin-for-gcp:v1.14.2'] });
    expect(options.storageLocation).toMatchObject({ provider: 'gcp', bucket: 'my_bucket', config: { serviceAccount: 'x@y' } });
    const env = serverOf(installManifests(options).objects).spec!.template.spec!.containers[0]!.env!;
    expect(env).toContainEqual({ name: 'GOOGLE_APPLICATION_CREDENTIALS', value: '/credentials/cloud' });
    expect(() => parseInstallFlags({ ...gcp, plugins: ['a b'] })).toThrow(/not an image reference/);
    expect(() => parseInstallFlags({ ...gcp, plugins: ['x/p:1', 'x/p:1'] })).toThrow(/given twice/);
  });

  it('plugin add and remove edit the server Deployment as Velero does', () => {
    const installed = serverOf(installManifests(parseInstallFlags({ namespace: 'velero', image: 'cairn/cairn:dev' })).objects);
    const added = withPlugin(installed, 'velero/velero-plugin-for-gcp:v1.14.2', 'Always');
    expect(installedPluginImages(added)).toEqual([{ name: 'velero-velero-plugin-for-gcp', image: 'velero/velero-plugin-for-gcp:v1.14.2' }]);
    expect(added.spec!.template.spec!.initContainers![0]!.imagePullPolicy).toBe('Always');
    expect(() => withPlugin(added, 'velero/velero-plugin-for-gcp:v1.15.0')).toThrow(/already there/);
    expect(installedPluginImages(withoutPlugin(added, 'velero-velero-plugin-for-gcp'))).toEqual([]);
    expect(installedPluginImages(withoutPlugin(added, 'velero/velero-plugin-for-gcp:v1.14.2'))).toEqual([]);
    expect(() => withoutPlugin(added, 'nope')).toThrow(/init container nope not found/);
    // A Deployment without the plugins volume (installed by an older cairn) gets it.
    const bare = structuredClone(installed);
    bare.spec!.template.spec!.volumes = bare.spec!.template.spec!.volumes!.filter((v) => v.name !== 'plugins');
    bare.spec!.template.spec!.containers[0]!.volumeMounts = bare.spec!.template.spec!.containers[0]!.volumeMounts!.filter((m) => m.name !== 'plugins');
    const fixed = withPlugin(bare, 'x/p:1');
    expect(fixed.spec!.template.spec!.volumes).toContainEqual({ name: 'plugins', emptyDir: {} });
    expect(fixed.spec!.template.spec!.containers[0]!.volumeMounts).toContainEqual({ name: 'plugins', mountPath: '/plugins' });
  });

  it('plugin get sorts by kind then name, as Velero prints them', () => {
    expect(sortPlugins([{ name: 'b', kind: 'ObjectStore' }, { name: 'z', kind: 'BackupItemAction' }, { name: 'a', kind: 'ObjectStore' }])).toEqual([
      { name: 'z', kind: 'BackupItemAction' },
      { name: 'a', kind: 'ObjectStore' },
      { name: 'b', kind: 'ObjectStore' },
    ]);
  });
});
