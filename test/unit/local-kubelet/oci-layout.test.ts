import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeImageLayout, type LayerEntry } from '../../../tools/local-cluster/images/oci-layout.js';

const work = mkdtempSync(join(tmpdir(), 'cairn-oci-layout-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const entries: LayerEntry[] = [
  { type: 'file', path: '/bin/tool', mode: 0o755, content: Buffer.from('#!/bin/sh\n') },
  { type: 'symlink', path: 'bin/alias', target: 'tool' },
  { type: 'directory', path: 'tmp', mode: 0o1777 },
];

describe('writeImageLayout', () => {
  it('writes a valid OCI layout whose manifest names its config and layer', async () => {
    const dir = join(work, 'a');
    const r = await writeImageLayout(dir, entries, { entrypoint: ['/bin/tool'], user: '1000' });
    expect(JSON.parse(readFileSync(join(dir, 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    expect(index.manifests.map((m) => m.digest)).toEqual([r.digest]);
    const blob = (d: string) => readFileSync(join(dir, 'blobs', 'sha256', d.slice('sha256:'.length)), 'utf8');
    const manifest = JSON.parse(blob(r.digest)) as { config: { digest: string }; layers: { digest: string; size: number }[] };
    const config = JSON.parse(blob(manifest.config.digest)) as { config: { Entrypoint: string[]; User: string }; rootfs: { diff_ids: string[] } };
    expect(config.config).toMatchObject({ Entrypoint: ['/bin/tool'], User: '1000' });
    expect(config.rootfs.diff_ids).toHaveLength(1);
    expect(manifest.layers[0]!.size).toBe(r.layerBytes);
    expect(existsSync(`${dir}.tmp-${process.pid}`)).toBe(false);
  });

  it('gives the same digest for the same files, whatever the order or the time', async () => {
    const a = await writeImageLayout(join(work, 'b'), entries, {});
    const b = await writeImageLayout(join(work, 'c'), [...entries].reverse(), {});
    expect(b.digest).toBe(a.digest);
    const c = await writeImageLayout(join(work, 'd'), [...entries, { type: 'file', path: 'x', mode: 0o644, content: Buffer.from('1') }], {});
    expect(c.digest).not.toBe(a.digest);
  });
});
