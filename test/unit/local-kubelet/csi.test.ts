/**
 * The local kubelet's CSI pieces that need no cluster: Bidirectional mount propagation in the launch script,
 * the CSI images' program mapping, and the kubelet's CSI paths.
 */
import { describe, expect, it } from 'vitest';
import { csiTargetPath, driverSocket } from '../../../tools/local-cluster/kubelet/csi-volumes.js';
import { resolveProgram } from '../../../tools/local-cluster/kubelet/images.js';
import { buildLaunchScript, namespacePropagation, type ContainerMount } from '../../../tools/local-cluster/kubelet/launch-script.js';

const mount = (target: string, bidirectional = false): ContainerMount => ({
  source: `/node${target}`, target, readOnly: false, sourceIsFile: false, bidirectional,
});

describe('local kubelet: CSI support', () => {
  it('keeps the host propagation only for a container with a Bidirectional mount, and makes its other mounts slaves', () => {
    expect(namespacePropagation([mount('/data')])).toBe('slave');
    const mounts = [mount('/csi'), mount('/var/lib/kubelet', true)];
    expect(namespacePropagation(mounts)).toBe('unchanged');
    const script = buildLaunchScript({ argv: ['true'], mounts, exitCodeFile: '/tmp/x.exit' });
    expect(script).toContain("mount --make-rslave '/csi'");
    expect(script).not.toContain("mount --make-rslave '/var/lib/kubelet'");
    const plain = buildLaunchScript({ argv: ['true'], mounts: [mount('/data')], exitCodeFile: '/tmp/x.exit' });
    expect(plain).not.toContain('--make-rslave');
  });

  it('runs the host-path driver image with the checkout\'s Node and tsx, and its args', () => {
    const p = resolveProgram({ image: 'registry.k8s.io/sig-storage/hostpathplugin:v1.17.0', args: ['--nodeid=n1'], repoDir: '/repo' });
    expect(p).toEqual({
      ok: true,
      kind: 'csi-hostpath-driver',
      argv: ['/repo/node_modules/.bin/node', '--import', '/repo/node_modules/tsx/dist/loader.mjs', '/repo/tools/local-cluster/csi/driver/main.ts', '--nodeid=n1'],
    });
  });

  it('maps the sidecar images to their cached binaries, or ErrImagePull naming the setup step when missing', () => {
    const p = resolveProgram({ image: 'registry.k8s.io/sig-storage/csi-provisioner:v6.3.0', args: ['--v=2'], repoDir: '/repo' });
    if (p.ok) {
      expect(p.kind).toBe('csi-binary');
      expect(p.argv[0]).toMatch(/\/csi-provisioner-v\d+\.\d+\.\d+$/);
      expect(p.argv.slice(1)).toEqual(['--v=2']);
    } else {
      expect(p.message).toContain('setup --csi');
    }
  });

  it('publishes where the real kubelet does', () => {
    const layout = { rootDir: '/run/nodes/n1' };
    expect(driverSocket(layout, 'hostpath.csi.k8s.io')).toBe('/run/nodes/n1/var/lib/kubelet/plugins/hostpath.csi.k8s.io/csi.sock');
    expect(csiTargetPath(layout, 'uid1', 'pvc-1', false)).toBe('/run/nodes/n1/var/lib/kubelet/pods/uid1/volumes/kubernetes.io~csi/pvc-1/mount');
    expect(csiTargetPath(layout, 'uid1', 'pvc-1', true)).toBe('/run/nodes/n1/var/lib/kubelet/pods/uid1/volumeDevices/kubernetes.io~csi/pvc-1');
  });
});
