/**
 * Where the test bed's CSI host-path driver keeps a volume on the host (docs/test-bed.md, CSI section): a directory
 * per Filesystem volume and a sparse image file per Block volume under `<run-dir>/csi/hostpath/volumes/`, named by
 * the PV's `spec.csi.volumeHandle`. Tests and benchmarks write and read volume contents there, as an operator with
 * access to the storage would. Pure (no vitest), so bench/ uses it too.
 */
import { join } from 'node:path';

export type VolumeMode = 'Filesystem' | 'Block';

export function hostpathVolumePath(runDir: string, volumeHandle: string, volumeMode: VolumeMode = 'Filesystem'): string {
  if (!volumeHandle) throw new Error('a CSI volume handle is needed to find the volume on the host');
  return join(runDir, 'csi', 'hostpath', 'volumes', volumeMode === 'Block' ? `${volumeHandle}.img` : volumeHandle);
}
