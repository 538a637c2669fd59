/**
 * What all in-pod data mover commands share (`pod-volume backup|restore`, `data-mover backup|restore`): the flags,
 * the logger, the run, the termination message and the exit status (0 on success, 1 otherwise, as Velero's data
 * mover exits).
 */
import { Flags } from '@oclif/core';
import { OperationFailedError } from '../base/errors.js';
import { createLogger, type LogFormat, type LogLevel } from '../base/logger.js';
import { parseDuration } from './duration.js';
import { BaseCommand, roleLogLevel } from './base-command.js';
import { connect } from '../kube/client.js';
import { lockOwnerFromEnv } from '../storage/lock-owner.js';
import { VolumeModes, type TaskKind, type VolumeMode } from '../agent/microservice/protocol.js';
import type { RunDataPathResult } from '../agent/microservice/run.js';
import type { DataMoverTaskOptions } from '../agent/microservice/task.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH, writeTerminationMessage } from '../agent/microservice/termination.js';

const dataMoverFlags = {
  'volume-path': Flags.string({ description: 'The volume inside this pod.', required: true }),
  'resource-timeout': Flags.string({ description: 'How long to wait for cluster resources (Go duration).', required: true }),
  'node-name': Flags.string({ description: 'This node (default: $NODE_NAME), recorded as the Events\' source host.', env: 'NODE_NAME' }),
  'termination-message-path': Flags.string({ description: 'Where the result goes for the node-agent to read.', default: DEFAULT_TERMINATION_MESSAGE_PATH }),
  'progress-interval': Flags.string({ description: 'Minimum time between progress Events (Go duration).', default: '10s' }),
  'store-retry-timeout': Flags.string({
    description: 'How long to keep retrying an object-store call that fails transiently (refused, reset, timeout, throttled, 5xx) before failing (Go duration; 0s = no retries).',
    default: '5m',
  }),
};

/** `--upload-bytes-per-second` of the backup commands (the node-agent ConfigMap's `uploadBytesPerSecond`). */
const uploadRateFlag = Flags.integer({ description: 'Write at most this many bytes per second to the object store.', min: 1 });

/** `--cache-dir` of the backup commands: the node directory (mounted by the node agent) holding the listing caches. */
export const listingCacheFlag = Flags.string({
  description: 'Directory holding each volume\'s listing cache between backups: an unchanged directory is stored as last time without reading its listing.',
});

/** `--volume-mode` of the data-mover commands (the exposer knows whether it mounted a file system or a device). */
const volumeModeFlag = Flags.string({ description: 'How the volume is exposed: Filesystem (a directory) or Block (a device).', required: true, options: [...VolumeModes] });

export interface DataMoverCommandInput {
  name: string;
  kind: TaskKind;
  flags: {
    kubeconfig?: string | undefined;
    context?: string | undefined;
    namespace: string;
    'log-level'?: LogLevel | undefined;
    'log-format': LogFormat;
    'volume-path': string;
    'volume-mode'?: string | undefined;
    'resource-timeout': string;
    'node-name'?: string | undefined;
    'termination-message-path': string;
    'progress-interval': string;
    'store-retry-timeout': string;
    'upload-bytes-per-second'?: number | undefined;
    'cache-dir'?: string | undefined;
  };
  run: (opts: DataMoverTaskOptions) => Promise<RunDataPathResult>;
}

export async function runDataMoverCommand(input: DataMoverCommandInput): Promise<void> {
  const { flags } = input;
  const resourceTimeoutMs = parseDuration('--resource-timeout', flags['resource-timeout']);
  const progressIntervalMs = parseDuration('--progress-interval', flags['progress-interval']);
  const storeRetryForMs = parseDuration('--store-retry-timeout', flags['store-retry-timeout']);
  // The data mover's log is collected by the node-agent: info by default, as Velero's.
  const level = roleLogLevel(flags['log-level']);
  const logger = createLogger({ level, format: flags['log-format'], bindings: { component: 'data-mover', [input.kind]: input.name } });
  const kube = connect({ kubeconfig: flags.kubeconfig, context: flags.context });
  // Deleting the pod sends SIGTERM: stop the transfer cleanly (its repository lock released) instead of dying mid-way.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(new Error(`the data mover was stopped (${signal}) before it finished`));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const result = await input.run({
    kube,
    namespace: flags.namespace,
    name: input.name,
    volumePath: flags['volume-path'],
    volumeMode: (flags['volume-mode'] as VolumeMode | undefined) ?? 'Filesystem',
    resourceTimeoutMs,
    logger,
    nodeName: flags['node-name'],
    progressIntervalMs,
    storeRetryForMs,
    lockOwner: lockOwnerFromEnv(process.env),
    signal: stop.signal,
    ...(flags['upload-bytes-per-second'] ? { uploadBytesPerSecond: flags['upload-bytes-per-second'] } : {}),
    ...(flags['cache-dir'] ? { cacheDir: flags['cache-dir'] } : {}),
  });
  process.removeListener('SIGTERM', onSignal);
  process.removeListener('SIGINT', onSignal);
  try {
    writeTerminationMessage(flags['termination-message-path'], result.terminationMessage);
  } catch (err) {
    logger.warn({ path: flags['termination-message-path'], err: (err as Error).message }, 'could not write the termination message');
  }
  logger.info({ outcome: result.outcome }, 'data mover exiting');
  if (result.outcome !== 'completed') throw new OperationFailedError(result.terminationMessage);
}

/** What one in-pod data mover command is made of. */
export interface DataMoverCommandSpec {
  summary: string;
  /** The flag naming the object carried out ("data-upload"), and that object's kind ("DataUpload"). */
  objectFlag: string;
  objectKind: string;
  /** The object's kind in the log lines. */
  kind: TaskKind;
  /** Backups write to the object store (`--upload-bytes-per-second`) and keep listing caches (`--cache-dir`). */
  backup: boolean;
  /** Snapshot data movers are told how the volume is exposed: `--volume-mode`. */
  volumeMode: boolean;
  run: DataMoverCommandInput['run'];
}

/** A hidden in-pod data mover command: the shared flags, those the spec asks for, and the shared run. */
export function defineDataMoverCommand(spec: DataMoverCommandSpec) {
  return class DataMoverCommand extends BaseCommand<typeof DataMoverCommand> {
    static override summary = spec.summary;
    static override hidden = true;
    static override flags = {
      ...dataMoverFlags,
      ...(spec.backup ? { 'upload-bytes-per-second': uploadRateFlag, 'cache-dir': listingCacheFlag } : {}),
      ...(spec.volumeMode ? { 'volume-mode': volumeModeFlag } : {}),
      [spec.objectFlag]: Flags.string({ description: `The ${spec.objectKind} to carry out.`, required: true }),
    };

    async run(): Promise<void> {
      const flags = this.flags as DataMoverCommandInput['flags'] & Record<string, unknown>;
      await runDataMoverCommand({ name: String(flags[spec.objectFlag]), kind: spec.kind, flags, run: spec.run });
    }
  };
}
