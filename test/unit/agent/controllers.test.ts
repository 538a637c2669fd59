import { describe, expect, it } from 'vitest';
import { CANCEL_DELAY_IN_PROGRESS_MS, CANCEL_DELAY_OTHERS_MS, cancelOverdue, isTerminal, phaseOf, type DataPathObject } from '../../../src/agent/controllers/data-path-decisions.js';
import { isRestoreWaitRunning } from '../../../src/agent/controllers/pod-volume-restore.js';

const cr = (phase?: string): DataPathObject => ({ spec: {}, ...(phase !== undefined ? { status: { phase } } : {}) });

describe('node-agent controller decisions', () => {
  it('reads an empty phase as New; Completed, Failed and Canceled are final', () => {
    expect(phaseOf(cr())).toBe('New');
    expect(phaseOf(cr(''))).toBe('New');
    expect(['Completed', 'Failed', 'Canceled'].map((p) => isTerminal(cr(p)))).toEqual([true, true, true]);
    expect(['New', 'Accepted', 'Prepared', 'InProgress', 'Canceling'].map((p) => isTerminal(cr(p)))).toEqual([false, false, false, false, false]);
  });

  it('forces a cancel that was not carried out: after 1 h while running, after 5 min otherwise', () => {
    expect(cancelOverdue('InProgress', 0, CANCEL_DELAY_IN_PROGRESS_MS - 1)).toBe(false);
    expect(cancelOverdue('Canceling', 0, CANCEL_DELAY_IN_PROGRESS_MS)).toBe(true);
    expect(cancelOverdue('Accepted', 0, CANCEL_DELAY_OTHERS_MS - 1)).toBe(false);
    expect(cancelOverdue('Prepared', 0, CANCEL_DELAY_OTHERS_MS)).toBe(true);
  });

  it('lets a PVR start only once the restored pod\'s restore-wait init container runs', () => {
    const status = (state: object) => ({ status: { initContainerStatuses: [{ name: 'restore-wait', image: 'i', imageID: '', ready: false, restartCount: 0, state }] } });
    expect(isRestoreWaitRunning(status({ running: { startedAt: new Date() } }))).toBe(true);
    expect(isRestoreWaitRunning(status({ waiting: { reason: 'PodInitializing' } }))).toBe(false);
    expect(isRestoreWaitRunning(status({ terminated: { exitCode: 0 } }))).toBe(false);
    expect(isRestoreWaitRunning({ status: {} })).toBe(false);
  });
});
