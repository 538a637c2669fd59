import type { Restore } from '../../api/index.js';
import { restoreClient } from '../../cli/restores.js';
import { defineDescribeStoredCommand, type DescribeContext } from '../../cli/describe/command.js';
import { gatherRestore } from '../../cli/describe/gather.js';
import { describeRestore, restoreDescription } from '../../cli/describe/restore.js';

export default defineDescribeStoredCommand<Restore>({
  kind: 'restore',
  summary: 'Describe restores in detail.',
  description: 'Prints the sections Velero prints, in the same order. Files kept in storage are read through the cluster.',
  details: 'Add the list of restored resources and per-volume information (pod volume restores and data downloads with live progress).',
  client: restoreClient,
  text: async (restore, ctx) => describeRestore({ restore, details: ctx.details, colours: ctx.colours, ...(await gather(restore, ctx, true)) }),
  data: async (restore, ctx) => restoreDescription({ restore, details: ctx.details, ...(await gather(restore, ctx, false)) }),
});

function gather(restore: Restore, ctx: DescribeContext, text: boolean) {
  return gatherRestore(ctx.kube, restore, { namespace: ctx.namespace, details: ctx.details, text, timeoutMs: ctx.timeoutMs, logger: ctx.logger });
}
