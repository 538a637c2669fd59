import { describe, expect, it } from 'vitest';
import {
  containerLogFile,
  hostPathOnNode,
  pidFile,
  pvMountDir,
  sharedDirFor,
  terminationLogFile,
  volumeDir,
} from '../../../tools/local-cluster/kubelet/layout.js';

const l = { rootDir: '/run/nodes/local-node-1' };

describe('node layout (the real kubelet layout under the node root)', () => {
  it('puts volumes where fs-backup looks for them', () => {
    expect(volumeDir(l, 'uid1', 'emptyDir', 'scratch')).toBe('/run/nodes/local-node-1/var/lib/kubelet/pods/uid1/volumes/kubernetes.io~empty-dir/scratch');
    expect(volumeDir(l, 'uid1', 'secret', 's')).toBe('/run/nodes/local-node-1/var/lib/kubelet/pods/uid1/volumes/kubernetes.io~secret/s');
    expect(volumeDir(l, 'uid1', 'configMap', 'c')).toBe('/run/nodes/local-node-1/var/lib/kubelet/pods/uid1/volumes/kubernetes.io~configmap/c');
    expect(volumeDir(l, 'uid1', 'projected', 'kube-api-access-x')).toBe(
      '/run/nodes/local-node-1/var/lib/kubelet/pods/uid1/volumes/kubernetes.io~projected/kube-api-access-x',
    );
    expect(pvMountDir(l, 'uid1', 'pvc-123')).toBe('/run/nodes/local-node-1/var/lib/kubelet/pods/uid1/volumes/kubernetes.io~csi/pvc-123/mount');
  });

  it('re-roots hostPath volumes under the node root', () => {
    expect(hostPathOnNode(l, '/var/lib/kubelet/pods')).toBe('/run/nodes/local-node-1/var/lib/kubelet/pods');
    expect(hostPathOnNode(l, '/tmp/../data/x/')).toBe('/run/nodes/local-node-1/data/x');
    expect(() => hostPathOnNode(l, 'relative')).toThrow();
  });

  it('keeps paths already on the node, and paths under the shared run directory, as they are', () => {
    const shared = { rootDir: '/run/nodes/local-node-1', sharedDir: sharedDirFor('/run/nodes/local-node-1') };
    expect(shared.sharedDir).toBe('/run');
    expect(hostPathOnNode(shared, '/run/fs-store/backups')).toBe('/run/fs-store/backups');
    expect(hostPathOnNode(shared, '/run/nodes/local-node-1/pv/pvc-1')).toBe('/run/nodes/local-node-1/pv/pvc-1');
    expect(hostPathOnNode(shared, '/runner/x')).toBe('/run/nodes/local-node-1/runner/x');
    expect(hostPathOnNode(shared, '/var/lib/kubelet/pods')).toBe('/run/nodes/local-node-1/var/lib/kubelet/pods');
    expect(sharedDirFor('/somewhere/node-a')).toBeUndefined();
  });

  it('names logs, termination files and pid files per container run', () => {
    expect(containerLogFile(l, { namespace: 'ns', name: 'p', uid: 'u' }, 'app', 2)).toBe('/run/nodes/local-node-1/var/log/pods/ns_p_u/app/2.log');
    expect(terminationLogFile(l, 'u', 'app', 0)).toBe('/run/nodes/local-node-1/var/lib/kubelet/pods/u/containers/app/0');
    expect(pidFile(l, 'u', 'app')).toBe('/run/nodes/local-node-1/pids/u_app');
  });
});
