/**
 * Jobs: the selector and template labels carry the old Job's UID (`controller-uid`); the API server generates them
 * again for the new Job and would reject a selector naming another UID.
 */
import type { RestoreItemAction, UnstructuredObject } from '../../plugins/item-actions/types.js';

const UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

interface JobSpec {
  manualSelector?: boolean;
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  template?: { metadata?: { labels?: Record<string, string> } };
}

export function cleanJob(item: UnstructuredObject): UnstructuredObject {
  const job = structuredClone(item);
  const spec = (job.spec ?? {}) as JobSpec;
  const match = spec.selector?.matchLabels;
  if (match) for (const k of UID_LABELS) delete match[k];
  if (spec.selector && !spec.manualSelector && Object.keys(match ?? {}).length === 0 && !(spec.selector.matchExpressions ?? []).length) {
    delete spec.selector;
  }
  const labels = spec.template?.metadata?.labels;
  if (labels) for (const k of UID_LABELS) delete labels[k];
  job.spec = spec;
  return job;
}

export const jobRestoreAction: RestoreItemAction = {
  name: 'velero.io/job',
  appliesTo: () => ({ includedResources: ['jobs.batch'] }),
  execute: async (item) => ({ item: cleanJob(item) }),
};
