// A failed test run keeps its cluster's logs, not its data: `down({ keep: 'logs' })` leaves the components' logs,
// every node's pod logs and the small top-level files, and removes etcd's, MinIO's, the registry's and the nodes'
// data (gigabytes after an e2e run).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { down, isLogPath } from '../../../tools/local-cluster/cluster.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function files(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

describe('a run directory kept for its logs', () => {
  it('tells log paths from data paths', () => {
    for (const p of ['logs', 'logs/etcd.log', 'nodes/local-node-1/var-log/pods/x/0.log', 'nodes/n/var/log/pods/a_b_c/app/0.log']) expect(isLogPath(p), p).toBe(true);
    for (const p of ['etcd/member/snap/db', 'minio/cairn-test/x', 'nodes/n/var-lib/containerd/x', 'nodes/n/var/lib/kubelet/pods/x', 'logsx/a']) expect(isLogPath(p), p).toBe(false);
  });

  it('keeps the logs and the top-level files, and removes the data', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'cairn-run-'));
    dirs.push(runDir);
    const write = (path: string) => {
      mkdirSync(join(runDir, path, '..'), { recursive: true });
      writeFileSync(join(runDir, path), 'x');
    };
    for (const path of [
      '.cairn-run-dir',
      'owner.pid',
      'logs/kube-apiserver.log',
      'etcd/member/snap/db',
      'minio/cairn-test/backups/x',
      'registry/docker/registry/v2/blobs/x',
      'nodes/local-node-1/var-log/pods/cairn_server_1/cairn/0.log',
      'nodes/local-node-1/var-lib/containerd/io.containerd.content.v1.content/blobs/x',
      'nodes/local-node-1/run/containerd/containerd.sock.ttrpc',
      'nodes/local-node-2/var/log/pods/ns_app_2/app/0.log',
      'nodes/local-node-2/var/lib/kubelet/pods/2/volumes/x',
    ])
      write(path);

    const result = await down({ runDir, keep: 'logs', graceMs: 100 });

    expect(result.removed).toBe(false);
    expect(files(runDir)).toEqual([
      '.cairn-run-dir',
      'logs/kube-apiserver.log',
      'nodes/local-node-1/var-log/pods/cairn_server_1/cairn/0.log',
      'nodes/local-node-2/var/log/pods/ns_app_2/app/0.log',
      'owner.pid',
    ]);
  });
});
