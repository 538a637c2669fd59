import type { Restore } from '../../api/index.js';
import { restoreClient } from '../../cli/restores.js';
import { defineDescribeStoredCommand } from '../../cli/describe/command.js';
import { gatherRestore } from '../../cli/describe/gather.js';
import { describeRestore, restoreDescription } from '../../cli/describe/restore.js';

export default defineDescribeStoredCommand({
  kind: 'restore',
  summary: 'Describe restores in detail.',
  description: 'Prints the sections Velero prints, in the same order. Files kept in storage are read through the cluster.',
  details: 'Add the list of restored resources and per-volume information (pod volume restores and data downloads with live progress).',
  client: restoreClient,
  gather: gatherRestore,
  text: (restore: Restore, gathered, ctx) => describeRestore({ restore, details: ctx.details, colours: ctx.colours, ...gathered }),
  data: (restore: Restore, gathered, ctx) => restoreDescription({ restore, details: ctx.details, ...gathered }),
});
