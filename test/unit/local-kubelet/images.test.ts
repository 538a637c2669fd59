import { describe, expect, it } from 'vitest';
import { imageKind, imageRepositoryName, resolveProgram } from '../../../tools/local-cluster/kubelet/images.js';

const repoDir = '/repo';
const cairn = ['/repo/node_modules/.bin/node', '/repo/bin/run.js'];

describe('image mapping', () => {
  it.each([
    ['cairn/cairn:dev', 'cairn'],
    ['ghcr.io/x/cairn:v1', 'cairn'],
    ['registry:5000/team/cairn@sha256:abc', 'cairn'],
    ['busybox', 'busybox'],
    ['docker.io/library/alpine:3.20', 'alpine'],
  ])('repository name of %s is %s', (image, name) => {
    expect(imageRepositoryName(image)).toBe(name);
  });

  it('knows cairn, the workload images and nothing else', () => {
    expect(imageKind('cairn/cairn:dev')).toBe('cairn');
    for (const img of ['busybox:1.36', 'alpine', 'debian:12', 'ubuntu:24.04', 'bash:5']) expect(imageKind(img)).toBe('host-tools');
    expect(imageKind('nginx:latest')).toBeUndefined();
    expect(imageKind('velero/velero:v1.16')).toBeUndefined();
  });

  it.each([
    [{ command: ['/cairn'], args: ['server'] }, [...cairn, 'server']],
    [{ command: ['cairn', 'node-agent', 'server'] }, [...cairn, 'node-agent', 'server']],
    [{ args: ['version'] }, [...cairn, 'version']],
    [{ command: ['sh', '-c', 'echo hi'] }, ['sh', '-c', 'echo hi']],
    [{ command: ['node', '-e', '1'] }, ['/repo/node_modules/.bin/node', '-e', '1']],
  ])('cairn image with %j runs %j', (spec, argv) => {
    expect(resolveProgram({ image: 'cairn/cairn:dev', repoDir, ...spec })).toEqual({ ok: true, kind: 'cairn', argv });
  });

  it('workload images follow command/args rules and default to sh', () => {
    expect(resolveProgram({ image: 'busybox', repoDir, command: ['sleep'], args: ['5'] })).toMatchObject({ argv: ['sleep', '5'] });
    expect(resolveProgram({ image: 'busybox', repoDir, args: ['cat', '/etc/hostname'] })).toMatchObject({ argv: ['cat', '/etc/hostname'] });
    expect(resolveProgram({ image: 'alpine', repoDir })).toMatchObject({ argv: ['sh'] });
  });

  it('an unknown image cannot be pulled', () => {
    const r = resolveProgram({ image: 'nginx:1.27', repoDir });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toBe('ErrImagePull');
      expect(r.message).toContain('nginx:1.27');
    }
  });
});
