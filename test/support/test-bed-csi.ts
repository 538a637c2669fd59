/** The test bed's CSI host-path driver and snapshot stack, for the tests that take or restore CSI snapshots. */
import { enableCsi } from '../../tools/local-cluster/csi/enable.js';
import { readState } from '../../tools/local-cluster/state.js';
import { clusterInfo } from './cluster.js';

/**
 * Enables CSI on the cluster of `runDir` (the test bed's unless told). A cold machine builds the CSI sidecars here
 * (minutes, once); on a cluster that has CSI already this returns at once.
 */
export async function enableTestBedCsi(runDir = clusterInfo().runDir): Promise<void> {
  const state = readState(runDir);
  if (!state) throw new Error(`no cluster state in ${runDir}`);
  await enableCsi({ state, log: (line) => process.stderr.write(`[csi] ${line}\n`) });
}
