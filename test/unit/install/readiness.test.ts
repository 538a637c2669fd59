import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isReady, stuckReason } from '../../../src/install/readiness.js';

function pod(name: string, status: Partial<V1ContainerStatus>, init = false): V1Pod {
  const c = { name: 'cairn', image: 'example.com/cairn:v9', ready: false, restartCount: 0, imageID: '', ...status } as V1ContainerStatus;
  return { metadata: { name }, status: init ? { initContainerStatuses: [c] } : { containerStatuses: [c] } };
}

describe('stuckReason', () => {
  it('names the pod, container, reason, image and the kubelet message of an image that cannot be pulled', () => {
    const reason = stuckReason([pod('cairn-1', { state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "example.com/cairn:v9"' } } })]);
    expect(reason).toBe('pod cairn-1 container cairn: ImagePullBackOff (image "example.com/cairn:v9"): Back-off pulling image "example.com/cairn:v9"');
  });

  it('does not give up on a first failed pull (the kubelet retries) or on a container still starting', () => {
    expect(stuckReason([pod('a', { state: { waiting: { reason: 'ErrImagePull' } } })])).toBeUndefined();
    expect(stuckReason([pod('a', { state: { waiting: { reason: 'ContainerCreating' } } })])).toBeUndefined();
    expect(stuckReason([pod('a', { state: { running: {} } })])).toBeUndefined();
  });

  it('reports a crash loop with the last termination message, and looks at init containers too', () => {
    const crash = pod('node-agent-x', { restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, message: 'no CRDs' } } });
    expect(stuckReason([crash])).toBe('pod node-agent-x container cairn: CrashLoopBackOff: no CRDs');
    // One crash is not yet a loop.
    expect(stuckReason([pod('once', { restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } })])).toBeUndefined();
    expect(stuckReason([pod('p', { state: { waiting: { reason: 'InvalidImageName' } } }, true)])).toContain('InvalidImageName');
  });
});

describe('isReady', () => {
  it('needs the server available and every node-agent pod ready', () => {
    expect(isReady({ server: { ready: 1, desired: 1 }, nodeAgent: { ready: 2, desired: 2 } })).toBe(true);
    expect(isReady({ server: { ready: 1, desired: 1 }, nodeAgent: { ready: 1, desired: 2 } })).toBe(false);
    expect(isReady({ server: { ready: 0, desired: 1 } })).toBe(false);
  });
});
