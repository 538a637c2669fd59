/** Real nodes raise the inotify instance limit when it is below what kubelets need, and never lower it. */
import { describe, expect, it } from 'vitest';
import { INOTIFY_INSTANCES_WANTED, inotifyInstancesToSet } from '../../../tools/local-cluster/node/real-nodes.js';

describe('the inotify instance limit for real nodes', () => {
  it('raises Linux default of 128', () => expect(inotifyInstancesToSet(128)).toBe(INOTIFY_INSTANCES_WANTED));
  it('leaves a limit already high enough, or higher', () => {
    expect(inotifyInstancesToSet(INOTIFY_INSTANCES_WANTED)).toBeUndefined();
    expect(inotifyInstancesToSet(65_536)).toBeUndefined();
  });
  it('raises an unreadable value', () => expect(inotifyInstancesToSet(Number.NaN)).toBe(INOTIFY_INSTANCES_WANTED));
});
