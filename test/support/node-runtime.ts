/**
 * Acting on a real node's container runtime as an operator with a shell on the node would: `ctr` against the node's
 * containerd (its socket is `/run/containerd/containerd.sock` inside the node, node-paths.ts maps it here), in the
 * `k8s.io` namespace where the kubelet's containers live. Real nodes only (the e2e tier).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { nodeBinaryPaths } from '../../tools/local-cluster/toolchain.js';
import { clusterInfo } from './cluster.js';
import { nodeFile } from './node-paths.js';

const exec = promisify(execFile);

/** `ctr -n k8s.io <args>` on node `nodeName`; resolves with stdout. */
export async function ctr(nodeName: string, args: string[]): Promise<string> {
  if (clusterInfo().runtime !== 'containerd') throw new Error('ctr needs real nodes (the e2e tier)');
  const socket = nodeFile(nodeName, '/run/containerd/containerd.sock');
  const { stdout } = await exec(nodeBinaryPaths().ctr, ['--address', socket, '--namespace', 'k8s.io', ...args], { timeout: 60_000 });
  return stdout;
}

interface PodStatusJson {
  spec: { nodeName?: string };
  status?: { containerStatuses?: { name: string; containerID?: string; state?: { running?: object } }[] };
}

/**
 * Sends `signal` to a running container's main process through containerd (SIGKILL: what the kernel's OOM killer or
 * a crash does to it); the kubelet then sees it exit as it would on any node.
 */
export async function killContainer(pod: PodStatusJson, container: string, signal = 'SIGKILL'): Promise<void> {
  const status = pod.status?.containerStatuses?.find((c) => c.name === container);
  const id = status?.containerID?.replace(/^containerd:\/\//, '');
  if (!id || !status?.state?.running) throw new Error(`container ${container} is not running (${JSON.stringify(status?.state ?? {})})`);
  await ctr(pod.spec.nodeName ?? '', ['tasks', 'kill', '--signal', signal, id]);
}
