/**
 * vitest globalSetup of the "e2e" project: one cluster of real nodes (kubelet, containerd, runc, CNI) for the whole
 * tier, with cairn's image built from this tree (while the cluster starts) and pushed into the cluster's registry.
 * Tests install `clusterInfo().image` with `--kubelet-root-dir clusterInfo().kubeletRootDir`.
 * CAIRN_E2E_RUNTIME=local runs the tier on the kubelet stand-in instead (no image; this tree's code), to compare times
 * or where real nodes cannot run; the tests that need a real runtime say so and fail there.
 */
import type { TestProject } from 'vitest/node';
import { ensureImageArchive, pushCairnImage } from '../../tools/image/test-bed-image.js';
import { startTestCluster } from './test-cluster.js';

const log = (line: string) => process.stderr.write(`[image] ${line}\n`);

export default function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.CAIRN_E2E_RUNTIME === 'local') return startTestCluster(project, { runtime: 'local' });
  // Started now, awaited after the cluster is up: the two overlap. A failure surfaces through the push below.
  const building = ensureImageArchive(log);
  building.catch(() => undefined);
  return startTestCluster(project, {
    runtime: 'containerd',
    image: async (state) => {
      const pushed = await pushCairnImage({ registryUrl: state.registry.url, log });
      log(`${pushed.reference}: built in ${pushed.buildSeconds.toFixed(1)} s (while the cluster started), pushed in ${pushed.pushSeconds.toFixed(1)} s`);
      return pushed.reference;
    },
  });
}
