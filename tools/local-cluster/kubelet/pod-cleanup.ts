/**
 * The end of a pod on the node: leftover processes killed, pid files removed, every mount under the pod directory
 * detached (PV binds included, so PV data is never touched) and then the directory removed.
 */
import { rm } from 'node:fs/promises';
import { pidFile, podDir, type NodeLayout } from './layout.js';
import { mountsUnder, unmountAllUnder } from './mounts.js';
import { groupAlive, killGroup } from './process-runtime.js';
import type { Slot } from './slot.js';

/** Returns the pod directory if it had to be left in place because a mount could not be detached. */
export async function removePodDir(o: {
  layout: NodeLayout;
  uid: string;
  slots: readonly Slot[];
  /** Undoes the CSI drivers' publish/stage mounts (NodeUnpublish/NodeUnstage) before anything is unmounted here. */
  beforeUnmount?: (() => Promise<void>) | undefined;
}): Promise<string | undefined> {
  const dir = podDir(o.layout, o.uid);
  for (const s of o.slots) {
    if (s.proc && groupAlive(s.proc.pid)) killGroup(s.proc.pid, 'SIGKILL');
    await rm(pidFile(o.layout, o.uid, s.spec.name), { force: true });
  }
  await o.beforeUnmount?.();
  await unmountAllUnder(dir);
  if ((await mountsUnder(dir)).length > 0) return dir;
  await rm(dir, { recursive: true, force: true });
  return undefined;
}
