import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Kinds } from '../../../src/api/index.js';
import type { Kube } from '../../../src/kube/client.js';
import { missingResources, requireResources } from '../../../src/kube/crd-presence.js';

/** A Kube whose discovery serves `served` (group/version → plurals); other group/versions answer 404. */
function discovery(served: Record<string, string[]>): Kube {
  const custom = {
    getAPIResources: async ({ group, version }: { group: string; version: string }) => {
      const plurals = served[`${group}/${version}`];
      if (!plurals) throw new ApiException(404, 'Not Found', '404 page not found', {});
      return { groupVersion: `${group}/${version}`, resources: plurals.map((name) => ({ name, kind: name, namespaced: true, singularName: '', verbs: [] })) };
    },
  };
  return { server: 'https://test', custom } as unknown as Kube;
}

const wanted = [Kinds.Backup, Kinds.Restore, Kinds.DataUpload, Kinds.DataDownload];

describe('missingResources', () => {
  it('finds nothing missing when every resource is served', async () => {
    const kube = discovery({ 'velero.io/v1': ['backups', 'restores'], 'velero.io/v2alpha1': ['datauploads', 'datadownloads'] });
    expect(await missingResources(kube, wanted)).toEqual([]);
  });

  it('names a resource its group/version does not serve, and every resource of a group/version not served at all', async () => {
    const kube = discovery({ 'velero.io/v1': ['backups'] });
    expect(await missingResources(kube, wanted)).toEqual(['restores.velero.io (v1)', 'datauploads.velero.io (v2alpha1)', 'datadownloads.velero.io (v2alpha1)']);
  });

  it('fails a role naming what is missing and how to install it', async () => {
    const kube = discovery({ 'velero.io/v1': ['backups', 'restores'] });
    await expect(requireResources(kube, 'the server', wanted)).rejects.toThrow(
      /^the server cannot start: the API server does not serve datauploads\.velero\.io \(v2alpha1\), datadownloads\.velero\.io \(v2alpha1\); install or upgrade .*cairn install/,
    );
  });

  it('passes other discovery errors on', async () => {
    const kube = { server: 'https://test', custom: { getAPIResources: async () => Promise.reject(new ApiException(403, 'Forbidden', '{"message":"nope"}', {})) } } as unknown as Kube;
    await expect(missingResources(kube, wanted)).rejects.toThrow(/forbidden/);
  });
});
