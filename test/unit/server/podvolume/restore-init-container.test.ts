import { describe, expect, it } from 'vitest';
import {
  buildRestoreWaitContainer,
  helperImage,
  restrictedSecurityContext,
  withRestoreWait,
  withoutRestoreWait,
} from '../../../../src/server/podvolume/restore-init-container.js';

const DEFAULT_IMAGE = 'ghcr.io/cairn-backup/cairn:v1.2.3';

function build(extra: Partial<Parameters<typeof buildRestoreWaitContainer>[0]> = {}) {
  const warnings: string[] = [];
  const container = buildRestoreWaitContainer({ restoreUID: 'uid-1', volumes: ['data', 'cache'], defaultImage: DEFAULT_IMAGE, warn: (m) => warnings.push(m), ...extra });
  return { container, warnings };
}

describe('restore-wait init container', () => {
  it('defaults: server image, cairn restore-helper <uid>, downward env, one mount per volume, 100m/128Mi, restricted context', () => {
    const { container, warnings } = build();
    expect(container).toEqual({
      name: 'restore-wait',
      image: DEFAULT_IMAGE,
      imagePullPolicy: 'IfNotPresent',
      command: ['/cairn'],
      args: ['restore-helper', 'uid-1'],
      env: [
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } },
      securityContext: { runAsUser: 1000, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
      volumeMounts: [
        { name: 'data', mountPath: '/restores/data' },
        { name: 'cache', mountPath: '/restores/cache' },
      ],
    });
    expect(warnings).toEqual([]);
  });

  it('image: configured with tag as is, without tag gets the default tag, without registry part is ignored', () => {
    expect(helperImage('registry.example/helper:7', DEFAULT_IMAGE)).toBe('registry.example/helper:7');
    expect(helperImage('registry.example/team/helper', DEFAULT_IMAGE)).toBe('registry.example/team/helper:v1.2.3');
    expect(helperImage('localhost:5000/helper', DEFAULT_IMAGE)).toBe('localhost:5000/helper:v1.2.3');
    expect(helperImage('registry.example/helper', 'ghcr.io/x/cairn')).toBe('registry.example/helper:latest');
    const warned: string[] = [];
    expect(helperImage('helper:1', DEFAULT_IMAGE, (m) => warned.push(m))).toBe(DEFAULT_IMAGE);
    expect(warned[0]).toContain('no registry part');
    expect(helperImage('', DEFAULT_IMAGE)).toBe(DEFAULT_IMAGE);
    expect(build({ config: { image: 'registry.example/helper:7' } }).container.image).toBe('registry.example/helper:7');
  });

  it('resources from cpuRequest, memRequest, cpuLimit, memLimit; "0" leaves one unset; a bad value falls back', () => {
    const { container } = build({ config: { cpuRequest: '200m', memRequest: '64Mi', cpuLimit: '1', memLimit: '256Mi' } });
    expect(container.resources).toEqual({ requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '1', memory: '256Mi' } });
    expect(build({ config: { cpuLimit: '0', memLimit: '0' } }).container.resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' } });
    expect(build({ config: { cpuRequest: '0', memRequest: '0', cpuLimit: '0', memLimit: '0' } }).container.resources).toEqual({});
    const bad = build({ config: { memRequest: 'lots' } });
    expect(bad.container.resources.requests?.memory).toBe('128Mi');
    expect(bad.warnings[0]).toContain('memRequest "lots" is not a quantity');
  });

  it('security context from secCtxRunAsUser / secCtxRunAsGroup / secCtxAllowPrivilegeEscalation', () => {
    const { container } = build({ config: { secCtxRunAsUser: '1001', secCtxRunAsGroup: '999', secCtxAllowPrivilegeEscalation: 'false' } });
    expect(container.securityContext).toEqual({ runAsUser: 1001, runAsGroup: 999, allowPrivilegeEscalation: false });
  });

  it('secCtx YAML wins over the single keys for the fields it sets', () => {
    const secCtx = 'capabilities:\n  drop:\n  - ALL\n  add: []\nallowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\nrunAsUser: 1001\nrunAsGroup: 999\n';
    const { container } = build({ config: { secCtx, secCtxRunAsUser: '5', secCtxAllowPrivilegeEscalation: 'true' } });
    expect(container.securityContext).toEqual({ capabilities: { drop: ['ALL'], add: [] }, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsUser: 1001, runAsGroup: 999 });
    expect(build({ config: { secCtx: 'runAsNonRoot: true', secCtxRunAsUser: '5' } }).container.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 5 });
  });

  it('an unparsable security setting falls back (first container, then restricted) with a warning', () => {
    const app = { runAsUser: 2000, runAsNonRoot: true };
    const withApp = build({ config: { secCtxRunAsUser: 'root' }, firstContainerSecurityContext: app });
    expect(withApp.container.securityContext).toEqual(app);
    expect(withApp.warnings[0]).toContain('secCtxRunAsUser "root" is not an integer');
    expect(build({ config: { secCtx: '- a list' } }).container.securityContext).toEqual(restrictedSecurityContext());
  });

  it("without configured security settings the first app container's context is copied", () => {
    const app = { runAsUser: 2000, runAsGroup: 3000, allowPrivilegeEscalation: false };
    const { container } = build({ firstContainerSecurityContext: app });
    expect(container.securityContext).toEqual(app);
    expect(container.securityContext).not.toBe(app);
  });

  it('a configured command replaces /cairn restore-helper (the UID stays the only argument)', () => {
    const { container } = build({ config: { command: '/velero-restore-helper' } });
    expect(container.command).toEqual(['/velero-restore-helper']);
    expect(container.args).toEqual(['uid-1']);
  });
});

describe('injecting and removing restore-wait', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: {
      initContainers: [{ name: 'restore-wait', image: 'old' }, { name: 'setup', image: 'busybox' }, { name: 'restic-wait', image: 'older' }],
      containers: [{ name: 'app' }],
    },
  };

  it('removes old restore-wait and restic-wait init containers, keeps others, leaves the input alone', () => {
    const cleaned = withoutRestoreWait(pod);
    expect(cleaned.spec.initContainers).toEqual([{ name: 'setup', image: 'busybox' }]);
    expect(pod.spec.initContainers).toHaveLength(3);
    const only = withoutRestoreWait({ spec: { initContainers: [{ name: 'restore-wait' }], containers: [] } });
    expect(only.spec).toEqual({ containers: [] });
  });

  it('prepends the new container before the pod’s own init containers', () => {
    const { container } = build();
    const injected = withRestoreWait(withoutRestoreWait(pod), container);
    expect(injected.spec.initContainers.map((c) => c.name)).toEqual(['restore-wait', 'setup']);
    expect(withRestoreWait({ spec: { containers: [] } }, container).spec).toEqual({ containers: [], initContainers: [container] });
  });
});
