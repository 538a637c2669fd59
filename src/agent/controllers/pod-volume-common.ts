/**
 * What the PVB and PVR kind specs share: both are about one volume of one workload pod, exposed by the pod-volume
 * exposer (the volume's host path mounted into a pod on the workload's node), and both leave restic work alone.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { Finalizers } from '../../api/constants.js';
import { Kinds, type PodVolumeBackup, type PodVolumeRestore } from '../../api/index.js';
import { customClient, type Parser } from '../../kube/custom.js';
import { undefinedIfNotFound } from '../../kube/errors.js';
import type { PodVolumeExposer } from '../exposer/pod-volume-exposer.js';
import type { DataPathControllerContext, DataPathKindSpec } from './data-path-controller.js';

export interface PodVolumeControllerContext extends DataPathControllerContext {
  exposer: PodVolumeExposer;
}

type PodVolumeCR = PodVolumeBackup | PodVolumeRestore;

/** The workload pod a PVB/PVR is about, if it still exists with the UID it names. */
export async function targetPodOf(ctx: DataPathControllerContext, obj: PodVolumeCR): Promise<V1Pod | undefined> {
  const pod = await undefinedIfNotFound(() => ctx.kube.core.readNamespacedPod({ namespace: obj.spec.pod.namespace ?? '', name: obj.spec.pod.name ?? '' }));
  // Another pod of the same name (the workload's pod was replaced) is not the one to back up or restore into.
  if (obj.spec.pod.uid && pod?.metadata?.uid !== obj.spec.pod.uid) return undefined;
  return pod;
}

export function podVolumeSpecParts<T extends PodVolumeCR>(
  ctx: PodVolumeControllerContext,
  kind: 'PodVolumeBackup' | 'PodVolumeRestore',
  parse: Parser<T>,
): Pick<DataPathKindSpec<T>, 'kind' | 'short' | 'resource' | 'client' | 'finalizer' | 'ignored' | 'describe' | 'expose' | 'getExposed' | 'cleanUp'> {
  return {
    kind,
    short: kind === 'PodVolumeBackup' ? 'PVB' : 'PVR',
    resource: Kinds[kind],
    client: customClient<T>(ctx.kube, Kinds[kind], parse),
    finalizer: Finalizers.PodVolume,
    // Legacy restic work is not cairn's.
    ignored: (obj) => (obj.spec.uploaderType as string | undefined) === 'restic',
    describe: (obj) => ({ pod: `${obj.spec.pod.namespace ?? ''}/${obj.spec.pod.name ?? ''}`, volume: obj.spec.volume }),
    async expose(obj) {
      const targetPod = await targetPodOf(ctx, obj);
      if (!targetPod) throw new Error(`pod ${obj.spec.pod.namespace ?? ''}/${obj.spec.pod.name ?? ''} not found`);
      await ctx.exposer.expose({ kind, owner: { name: obj.metadata.name ?? '', uid: obj.metadata.uid ?? '' }, targetPod, volume: obj.spec.volume });
      return { ready: true };
    },
    getExposed: (name) => ctx.exposer.getExposed(name),
    cleanUp: (obj) => ctx.exposer.cleanUp(obj.metadata.name ?? ''),
  };
}
