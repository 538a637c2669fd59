// The test bed's OCI registry: started with the cluster, images pushed to it from an OCI layout or an OCI archive
// come back byte for byte over the distribution API, and a second push of the same image uploads nothing.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeImageLayout } from '../../tools/local-cluster/images/oci-layout.js';
import { pushImageLayout, pushOciArchive } from '../../tools/local-cluster/registry-push.js';
import { clusterInfo } from '../support/cluster.js';

const work = mkdtempSync(join(tmpdir(), 'cairn-registry-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

async function manifest(url: string, repository: string, reference: string) {
  const res = await fetch(`${url}/v2/${repository}/manifests/${reference}`, { headers: { accept: MANIFEST } });
  expect(res.status).toBe(200);
  return { digest: res.headers.get('docker-content-digest'), body: JSON.parse(await res.text()) as { layers: { digest: string }[] } };
}

describe('test bed registry', () => {
  it('serves an image pushed from an OCI layout, and skips blobs it has on a second push', async () => {
    const { registry } = clusterInfo();
    const layout = join(work, 'hello');
    const content = Buffer.from(`hello ${Date.now()}\n`);
    const built = await writeImageLayout(layout, [{ type: 'file', path: 'etc/hello', mode: 0o644, content }], { cmd: ['/bin/true'] });

    const first = await pushImageLayout(layout, { registryUrl: registry.url, repository: 'test/hello', tag: 'v1' });
    expect(first.reference).toBe(`${registry.host}/test/hello:v1`);
    expect(first.digest).toBe(built.digest);
    expect(first.uploadedBytes).toBeGreaterThan(0);
    const again = await pushImageLayout(layout, { registryUrl: registry.url, repository: 'test/hello', tag: 'v2' });
    expect(again.uploadedBytes).toBe(0);

    const m = await manifest(registry.url, 'test/hello', 'v2');
    expect(m.digest).toBe(built.digest);
    const layer = await fetch(`${registry.url}/v2/test/hello/blobs/${m.body.layers[0]!.digest}`);
    const bytes = Buffer.from(await layer.arrayBuffer());
    expect(`sha256:${createHash('sha256').update(bytes).digest('hex')}`).toBe(m.body.layers[0]!.digest);
  });

  it('takes an OCI archive (a layout in a tar file)', async () => {
    const { registry } = clusterInfo();
    const layout = join(work, 'archived');
    const built = await writeImageLayout(layout, [{ type: 'file', path: 'x', mode: 0o644, content: Buffer.from('x') }], {});
    const archive = join(work, 'archived.tar');
    execFileSync('tar', ['-cf', archive, '-C', layout, '.']);
    const pushed = await pushOciArchive(archive, { registryUrl: registry.url, repository: 'test/archived', tag: 'latest' });
    expect(pushed.digest).toBe(built.digest);
    expect((await manifest(registry.url, 'test/archived', 'latest')).digest).toBe(built.digest);
  });
});
