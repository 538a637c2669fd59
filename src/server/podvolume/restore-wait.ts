/**
 * Waiting for a restore's PodVolumeRestores (docs/node-agent.md server side), one look at a time so a server
 * restart simply looks again: everything is read from the PVRs (label `velero.io/restore-uid`), their pods and the
 * node-agent pods. A PVR ends the wait when it is Completed, Failed or Canceled, or when the server gives up on it:
 * its pod was never scheduled, or no node agent runs on the pod's node, for longer than a bounded wait (Velero: 10
 * minutes), or the restore's `itemOperationTimeout` has passed. Giving up is recorded on the PVR itself (annotation
 * with the error, and `spec.cancel` so a node agent that shows up later does not start it), so it is decided once.
 */
import {
  Kinds,
  Labels,
  LabelValues,
  PodVolumeRestorePhase,
  formatDuration,
  parsePodVolumeRestore,
  type PodVolumeRestore,
  type Restore,
} from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { ageMs, tallyVerdicts, type VolumeRestoreTally, type VolumeRestoreVerdict } from '../volume-restore-wait.js';

/** On a PVR the server gave up waiting for: the error the restore reports for it. */
export const GAVE_UP_ANNOTATION = 'restore.cairn.io/pod-volume-error';

/** `give-up`: stop waiting and report the error; the PVR is marked so (see GAVE_UP_ANNOTATION). */
export type PodVolumeRestoreVerdict = VolumeRestoreVerdict;

export interface PodLike {
  spec?: { nodeName?: string };
  metadata?: { deletionTimestamp?: unknown };
}

export interface JudgeOptions {
  pvr: PodVolumeRestore;
  now: Date;
  /** The PVR's pod, or undefined when it does not exist (any more). */
  pod: PodLike | undefined;
  /** Whether a Running node-agent pod is on this node. */
  nodeAgentRunningOn: (node: string) => boolean;
  /** How long a PVR may wait for its pod to be scheduled on a node with a node agent. */
  nodeAgentWaitMs: number;
  /** The restore's `itemOperationTimeout`. */
  operationTimeoutMs: number;
}

function pvrName(pvr: PodVolumeRestore): string {
  return pvr.metadata?.name ?? '';
}

/** The error text of a finished PVR as Velero words it. */
function finishedError(pvr: PodVolumeRestore): string | undefined {
  const phase = pvr.status?.phase;
  const message = pvr.status?.message ?? '';
  if (phase === PodVolumeRestorePhase.Failed) return `pod volume restore failed: ${message}`;
  if (phase === PodVolumeRestorePhase.Canceled) return `pod volume restore canceled: ${message}`;
  return undefined;
}

export function judgePodVolumeRestore(opts: JudgeOptions): PodVolumeRestoreVerdict {
  const { pvr } = opts;
  const gaveUp = pvr.metadata?.annotations?.[GAVE_UP_ANNOTATION];
  if (gaveUp) return { state: 'failed', error: gaveUp };
  const phase = pvr.status?.phase ?? PodVolumeRestorePhase.New;
  if (phase === PodVolumeRestorePhase.Completed) return { state: 'completed' };
  const error = finishedError(pvr);
  if (error) return { state: 'failed', error };
  const age = ageMs(pvr, opts.now);
  const what = `pod volume restore ${pvrName(pvr)} (volume ${pvr.spec.volume} of pod ${pvr.spec.pod.namespace ?? ''}/${pvr.spec.pod.name ?? ''})`;
  if (age > opts.operationTimeoutMs) {
    return { state: 'give-up', error: `timed out after ${formatDuration(opts.operationTimeoutMs)} waiting for ${what} (phase ${phase})` };
  }
  // Once a node agent has accepted the PVR it reports the outcome itself.
  if (phase !== PodVolumeRestorePhase.New) return { state: 'waiting', why: `phase ${phase}` };
  const overdue = age > opts.nodeAgentWaitMs;
  if (!opts.pod) {
    return overdue ? { state: 'give-up', error: `${what}: the restored pod does not exist` } : { state: 'waiting', why: 'the restored pod is not found' };
  }
  const node = opts.pod.spec?.nodeName;
  if (!node) {
    return overdue
      ? { state: 'give-up', error: `${what}: the restored pod was not scheduled within ${formatDuration(opts.nodeAgentWaitMs)}` }
      : { state: 'waiting', why: 'the restored pod is not scheduled yet' };
  }
  if (!opts.nodeAgentRunningOn(node)) {
    return overdue ? { state: 'give-up', error: `node-agent pod is not running in node ${node}` } : { state: 'waiting', why: `no node-agent pod is running in node ${node} yet` };
  }
  return { state: 'waiting', why: 'waiting for the node agent to accept it' };
}

export interface PodVolumeRestoreWaitState extends VolumeRestoreTally {
  podVolumeRestores: PodVolumeRestore[];
}

export interface CheckPodVolumeRestoresOptions {
  kube: Kube;
  /** The install namespace. */
  namespace: string;
  restore: Restore;
  now: Date;
  nodeAgentWaitMs: number;
  operationTimeoutMs: number;
  log: Logger;
}

interface PodWithPhase extends PodLike {
  status?: { phase?: string };
}

/** Whether a Running, not deleted node-agent pod (label `role=node-agent`) is on each node. */
async function nodesWithNodeAgent(kube: Kube, namespace: string): Promise<Set<string>> {
  const pods = await kube.core.listNamespacedPod({ namespace, labelSelector: `${Labels.NodeAgentRole}=${LabelValues.NodeAgent}` });
  return new Set(
    pods.items
      .filter((p) => (p as PodWithPhase).status?.phase === 'Running' && !p.metadata?.deletionTimestamp && p.spec?.nodeName)
      .map((p) => p.spec?.nodeName ?? ''),
  );
}

async function readPod(kube: Kube, namespace: string, name: string): Promise<PodLike | undefined> {
  try {
    return (await kube.core.readNamespacedPod({ name, namespace })) as PodLike;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Lists the restore's PVRs and judges each; gives up on those overdue (marking them). */
export async function checkPodVolumeRestores(opts: CheckPodVolumeRestoresOptions): Promise<PodVolumeRestoreWaitState> {
  const client = customClient<PodVolumeRestore>(opts.kube, Kinds.PodVolumeRestore, parsePodVolumeRestore);
  const pvrs = await client.list(opts.namespace, `${Labels.RestoreUID}=${opts.restore.metadata.uid ?? ''}`);
  pvrs.sort((a, b) => pvrName(a).localeCompare(pvrName(b)));
  let nodeAgents: Set<string> | undefined;
  const pods = new Map<string, PodLike | undefined>();
  const judge = async (pvr: PodVolumeRestore): Promise<PodVolumeRestoreVerdict> => {
    const isNew = (pvr.status?.phase ?? PodVolumeRestorePhase.New) === PodVolumeRestorePhase.New && !pvr.metadata?.annotations?.[GAVE_UP_ANNOTATION];
    let pod: PodLike | undefined;
    if (isNew) {
      nodeAgents ??= await nodesWithNodeAgent(opts.kube, opts.namespace);
      const key = `${pvr.spec.pod.namespace ?? ''}/${pvr.spec.pod.name ?? ''}`;
      if (!pods.has(key)) pods.set(key, await readPod(opts.kube, pvr.spec.pod.namespace ?? '', pvr.spec.pod.name ?? ''));
      pod = pods.get(key);
      // A pod of the same name but another UID is not the restored pod.
      if (pod && (pod as { metadata?: { uid?: string } }).metadata?.uid !== pvr.spec.pod.uid) pod = undefined;
    }
    const agents = nodeAgents;
    return judgePodVolumeRestore({
      pvr,
      now: opts.now,
      pod,
      nodeAgentRunningOn: (node) => agents?.has(node) ?? false,
      nodeAgentWaitMs: opts.nodeAgentWaitMs,
      operationTimeoutMs: opts.operationTimeoutMs,
    });
  };
  const tally = await tallyVerdicts(pvrs, judge, async (pvr, error) => {
    opts.log.warn(`Giving up on PodVolumeRestore ${pvrName(pvr)}: ${error}`);
    await client.patch(opts.namespace, pvrName(pvr), { metadata: { annotations: { [GAVE_UP_ANNOTATION]: error } }, spec: { cancel: true } });
  });
  return { podVolumeRestores: pvrs, ...tally };
}
