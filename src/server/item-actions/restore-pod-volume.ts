/**
 * `velero.io/pod-volume-restore` (docs/fs-backup.md): for a restored pod whose volumes were backed up with
 * fs-backup, prepend the `restore-wait` init container so the workload starts only once the data is back. Init
 * containers of that name (or the legacy `restic-wait`) left by an earlier restore are always removed first. The
 * PodVolumeRestores themselves are created by the restore once the pod exists (src/server/podvolume/restore-pvr.ts).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Restore } from '../../api/index.js';
import { defaultImage as clientDefaultImage } from '../../base/version.js';
import { SERVER_NAME } from '../../api/install-names.js';
import type { Kube } from '../../kube/client.js';
import {
  PLUGIN_CONFIG_SELECTOR,
  buildRestoreWaitContainer,
  firstContainerSecurityContext,
  withRestoreWait,
  withoutRestoreWait,
} from '../podvolume/restore-init-container.js';
import { podVolumeRestoreAllowed } from '../podvolume/restore-allowed.js';
import { podVolumesOf, volumesToRestore } from '../podvolume/restore-volumes.js';
import type { RestoreItemAction } from '../../plugins/item-actions/types.js';

/** The image of the server Deployment's first container, else this client's release image. */
export async function serverImage(kube: Kube, namespace: string): Promise<string> {
  try {
    const deployment = await kube.apps.readNamespacedDeployment({ name: SERVER_NAME, namespace });
    const image = deployment.spec?.template.spec?.containers[0]?.image;
    if (image) return image;
  } catch {
    // Not installed as a Deployment (e.g. a server run by hand): fall through.
  }
  return clientDefaultImage();
}

/** `data` of the plugin ConfigMap, or undefined when there is none (or more than one, which is reported). */
export async function pluginConfig(kube: Kube, namespace: string, warn: (m: string) => void): Promise<Record<string, string> | undefined> {
  const list = await kube.core.listNamespacedConfigMap({ namespace, labelSelector: PLUGIN_CONFIG_SELECTOR });
  const items: V1ConfigMap[] = list.items;
  if (items.length > 1) {
    warn(`more than one ConfigMap matches ${PLUGIN_CONFIG_SELECTOR} in namespace ${namespace}: ${items.map((c) => c.metadata?.name ?? '').join(', ')}; using none of them`);
    return undefined;
  }
  return items[0]?.data ?? undefined;
}

function installNamespace(restore: Restore): string {
  return restore.metadata.namespace ?? 'velero';
}

export const podVolumeRestoreAction: RestoreItemAction = {
  name: 'velero.io/pod-volume-restore',
  appliesTo: () => ({ includedResources: ['pods'] }),
  async execute(item, ctx) {
    const pod = withoutRestoreWait(item);
    const pvbs = ctx.podVolumeBackups ?? [];
    if (!pvbs.length || !podVolumeRestoreAllowed(ctx.restore)) return { item: pod };
    const volumes = volumesToRestore({
      podVolumeBackups: pvbs,
      podName: ctx.itemFromBackup.metadata.name,
      sourceNamespace: ctx.itemFromBackup.metadata.namespace ?? '',
      podVolumes: podVolumesOf(pod),
    });
    if (!volumes.length) return { item: pod };
    const ns = installNamespace(ctx.restore);
    const warn = (m: string) => ctx.log.warn(m);
    const container = buildRestoreWaitContainer({
      restoreUID: ctx.restore.metadata.uid ?? '',
      volumes: volumes.map((v) => v.volume),
      defaultImage: await serverImage(ctx.kube, ns),
      ...(await pluginConfig(ctx.kube, ns, warn).then((config) => (config ? { config } : {}))),
      ...(firstContainerSecurityContext(pod) ? { firstContainerSecurityContext: firstContainerSecurityContext(pod) } : {}),
      warn,
    });
    ctx.log.info(`Adding the restore-wait init container to pod ${pod.metadata.name}: it waits for volumes ${volumes.map((v) => v.volume).join(', ')}`);
    return { item: withRestoreWait(pod, container) };
  },
};
