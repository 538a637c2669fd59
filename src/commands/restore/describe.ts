import { Args } from '@oclif/core';
import type { Restore } from '../../api/index.js';
import { restoreClient } from '../../cli/restores.js';
import { DescribeStoredCommand, describeStoredFlags, type DescribeContext } from '../../cli/describe/command.js';
import { gatherRestore } from '../../cli/describe/gather.js';
import { describeRestore, restoreDescription } from '../../cli/describe/restore.js';
import type { Kube } from '../../kube/client.js';

export default class RestoreDescribe extends DescribeStoredCommand<Restore> {
  static override summary = 'Describe restores in detail.';
  static override description = 'Prints the sections Velero prints, in the same order. Files kept in storage are read through the cluster.';
  static override args = { names: Args.string({ description: 'Names of restores to describe (default: all, or those matching --selector).' }) };
  static override flags = describeStoredFlags('restores', 'Add the list of restored resources and per-volume information (pod volume restores and data downloads with live progress).');
  protected readonly kind = 'restore';

  protected client(kube: Kube) {
    return restoreClient(kube);
  }

  protected async text(restore: Restore, ctx: DescribeContext): Promise<string> {
    return describeRestore({ restore, details: ctx.details, colours: ctx.colours, ...(await gather(restore, ctx, true)) });
  }

  protected async data(restore: Restore, ctx: DescribeContext): Promise<unknown> {
    return restoreDescription({ restore, details: ctx.details, ...(await gather(restore, ctx, false)) });
  }
}

function gather(restore: Restore, ctx: DescribeContext, text: boolean) {
  return gatherRestore(ctx.kube, restore, { namespace: ctx.namespace, details: ctx.details, text, timeoutMs: ctx.timeoutMs, logger: ctx.logger });
}
