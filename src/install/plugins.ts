/**
 * Plugins installed as Velero installs them: each plugin image becomes an init container of the server that copies
 * its binary into the `plugins` emptyDir (mounted at /target in it: the images' entrypoint copies
 * `/plugins/<binary>` there, e.g. `cp-plugin /plugins/velero-plugin-for-aws /target/velero-plugin-for-aws`), which
 * the server container mounts at /plugins and reads at start. The node agent runs no plugins: its data path uses the
 * built-in stores (as Velero's node agent has no plugin directory either).
 */
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { CairnError, NotFoundError, UsageError } from '../base/errors.js';
import { DEFAULT_PLUGIN_DIR, PLUGINS_VOLUME, SERVER_NAME } from '../api/install-names.js';
import { SERVER_CONTAINER_SECURITY } from './pod-security.js';

export const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export type PullPolicy = (typeof PULL_POLICIES)[number];

/**
 * Velero's init-container name for a plugin image: the repository without registry, tag or digest, with `/`, `_`
 * and `.` made `-` (`velero/velero-plugin-for-aws:v1.14.3` → `velero-velero-plugin-for-aws`).
 */
export function pluginContainerName(image: string): string {
  const slash = image.indexOf('/');
  const slashes = slash >= 0 ? image.slice(slash).split('/').length - 1 : 0;
  // With a registry (two or more slashes) or a leading slash the name starts after the first slash.
  const start = slashes > 1 || slash === 0 ? slash + 1 : 0;
  const at = image.lastIndexOf('@');
  const colon = image.lastIndexOf(':');
  const end = at > 0 ? at : colon > 0 ? colon : image.length;
  return image.slice(start, end).replace(/[/_.]/g, '-');
}

/** An image reference as a flag value; anything with spaces or empty is refused. */
export function checkPluginImage(flag: string, image: string): string {
  const ref = image.trim();
  if (!ref || /\s/.test(ref)) throw new UsageError(flag, `"${image}" is not an image reference`);
  const name = pluginContainerName(ref);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63) {
    throw new UsageError(flag, `the container name made from "${image}" (${name}) is not a valid name`);
  }
  return ref;
}

export function pluginInitContainer(image: string, pullPolicy: PullPolicy = 'IfNotPresent'): V1Container {
  return { name: pluginContainerName(image), image, imagePullPolicy: pullPolicy, securityContext: SERVER_CONTAINER_SECURITY, volumeMounts: [{ name: PLUGINS_VOLUME, mountPath: '/target' }] };
}

export class PluginEditError extends CairnError {}

function serverContainer(d: V1Deployment): V1Container {
  const c = d.spec?.template.spec?.containers.find((x) => x.name === SERVER_NAME);
  if (!c) throw new PluginEditError(`the ${SERVER_NAME} container is not in the server Deployment`);
  return c;
}

/** The Deployment with the plugin's init container added (and the plugins volume and mount, if missing). */
export function withPlugin(deployment: V1Deployment, image: string, pullPolicy: PullPolicy = 'IfNotPresent'): V1Deployment {
  const d = structuredClone(deployment);
  const spec = d.spec?.template.spec;
  if (!spec) throw new PluginEditError('the server Deployment has no pod template');
  const container = pluginInitContainer(image, pullPolicy);
  const existing = (spec.initContainers ?? []).find((c) => c.name === container.name);
  if (existing) throw new PluginEditError(`a plugin init container named ${container.name} is already there (image ${existing.image}); remove it first to change its image`);
  spec.initContainers = [...(spec.initContainers ?? []), container];
  if (!(spec.volumes ?? []).some((v) => v.name === PLUGINS_VOLUME)) spec.volumes = [...(spec.volumes ?? []), { name: PLUGINS_VOLUME, emptyDir: {} }];
  const server = serverContainer(d);
  if (!(server.volumeMounts ?? []).some((m) => m.name === PLUGINS_VOLUME)) server.volumeMounts = [...(server.volumeMounts ?? []), { name: PLUGINS_VOLUME, mountPath: DEFAULT_PLUGIN_DIR }];
  return d;
}

/** The Deployment without the init container of that name or image (Velero's `plugin remove NAME|IMAGE`). */
export function withoutPlugin(deployment: V1Deployment, nameOrImage: string): V1Deployment {
  const d = structuredClone(deployment);
  const spec = d.spec?.template.spec;
  const list = spec?.initContainers ?? [];
  const at = list.findIndex((c) => c.name === nameOrImage || c.image === nameOrImage);
  if (!spec || at < 0) throw new NotFoundError(`init container ${nameOrImage} not found in the cairn server Deployment`);
  spec.initContainers = list.filter((_, i) => i !== at);
  return d;
}

/** The plugin images of a server Deployment (its init containers that mount the plugins volume). */
export function installedPluginImages(deployment: V1Deployment): { name: string; image: string }[] {
  return (deployment.spec?.template.spec?.initContainers ?? [])
    .filter((c) => (c.volumeMounts ?? []).some((m) => m.name === PLUGINS_VOLUME))
    .map((c) => ({ name: c.name, image: c.image ?? '' }));
}
