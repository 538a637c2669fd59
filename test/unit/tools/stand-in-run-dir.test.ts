// Stand-in nodes cannot run pods from a run directory under /tmp: cairn's pods mount an emptyDir at /tmp over the
// host's, which hides the later volumes' sources there. `up` says so before it starts anything.
import { describe, expect, it } from 'vitest';
import { standInRunDirProblem, up } from '../../../tools/local-cluster/cluster.js';

describe('a stand-in cluster run directory under /tmp', () => {
  it('is refused for stand-in nodes, with what to do instead', () => {
    expect(standInRunDirProblem('/tmp/home/.cache/cairn/run/test-1', 'local', 2)).toMatch(/under \/tmp.*outside \/tmp.*--runtime containerd/);
    expect(standInRunDirProblem('/tmp/x/../y', 'local', 1)).toContain('/tmp/y');
  });

  it('is fine for real nodes, for a cluster without nodes, and elsewhere', () => {
    expect(standInRunDirProblem('/tmp/run', 'containerd', 2)).toBeUndefined();
    expect(standInRunDirProblem('/tmp/run', 'local', 0)).toBeUndefined();
    expect(standInRunDirProblem('/root/.cache/cairn/run/test-1', 'local', 2)).toBeUndefined();
    expect(standInRunDirProblem('/tmpfoo/run', 'local', 2)).toBeUndefined();
  });

  it('stops up() before anything starts', async () => {
    await expect(up({ runDir: '/tmp/cairn-never-started', name: 'x', nodes: 1, log: () => undefined })).rejects.toThrow(/under \/tmp/);
  });
});
