import { describe, expect, it } from 'vitest';
import { mountHidingHostDir } from '../../../tools/local-cluster/kubelet/container-config.js';

describe('a stand-in container mount that would hide the node', () => {
  const hostDirs = ['/home/ci/.cache/cairn/run/nodes/node-1', '/home/ci/checkout'];

  it('refuses a mount at a parent of a host directory, naming both', () => {
    const message = mountHidingHostDir(['/data', '/home'], hostDirs);
    expect(message).toContain('mountPath "/home"');
    expect(message).toContain('/home/ci/.cache/cairn/run/nodes/node-1');
  });

  it('refuses a mount at the directory itself and at the root', () => {
    expect(mountHidingHostDir(['/home/ci/checkout'], hostDirs)).toContain('/home/ci/checkout');
    expect(mountHidingHostDir(['/'], hostDirs)).toContain('mountPath "/"');
  });

  it('takes mounts beside or below the host directories', () => {
    expect(mountHidingHostDir(['/data', '/home/ci2', '/home/ci/checkout-2', '/home/ci/checkout/sub', '/pod-work'], hostDirs)).toBeUndefined();
  });
});
