/**
 * Waiting for a restore's DataDownloads, one look at a time so a server restart simply looks again: everything is
 * read from the DataDownloads of the restore (label `velero.io/restore-uid`). A DataDownload ends the wait when it
 * is Completed, Failed or Canceled, or when the restore's `itemOperationTimeout` has passed since it was created:
 * then the server cancels it (`spec.cancel`, so the node agent stops and cleans up) and records why on it, so the
 * decision is made once and survives restarts.
 */
import { DataDownloadPhase, Kinds, Labels, formatDuration, parseDataDownload, type DataDownload, type Restore } from '../../api/index.js';
import type { Logger } from '../../base/logger.js';
import type { Kube } from '../../kube/client.js';
import { customClient } from '../../kube/custom.js';
import { ageMs, tallyVerdicts, type VolumeRestoreTally, type VolumeRestoreVerdict } from '../volume-restore-wait.js';

/** On a DataDownload the server gave up waiting for: the error the restore reports for it. */
export const DD_GAVE_UP_ANNOTATION = 'restore.cairn.io/data-download-error';

/** `give-up`: stop waiting, cancel it and report the error (see DD_GAVE_UP_ANNOTATION). */
export type DataDownloadVerdict = VolumeRestoreVerdict;

function ddName(dd: DataDownload): string {
  return dd.metadata?.name ?? '';
}

/** `persistent volume claim <ns>/<name>`: what a user looks for in an error. */
export function claimOf(dd: DataDownload): string {
  return `persistent volume claim ${dd.spec.targetVolume.namespace}/${dd.spec.targetVolume.pvc}`;
}

/** The error of a finished DataDownload, naming its claim. */
export function dataDownloadError(dd: DataDownload): string | undefined {
  const gaveUp = dd.metadata?.annotations?.[DD_GAVE_UP_ANNOTATION];
  if (gaveUp) return gaveUp;
  const phase = dd.status?.phase;
  const message = dd.status?.message ?? '';
  if (phase === DataDownloadPhase.Failed) return `data download of ${claimOf(dd)} failed (DataDownload ${ddName(dd)}): ${message}`;
  if (phase === DataDownloadPhase.Canceled) return `data download of ${claimOf(dd)} canceled (DataDownload ${ddName(dd)}): ${message}`;
  return undefined;
}

export function judgeDataDownload(opts: { dd: DataDownload; now: Date; operationTimeoutMs: number }): DataDownloadVerdict {
  const { dd } = opts;
  const phase = dd.status?.phase ?? DataDownloadPhase.New;
  if (!dd.metadata?.annotations?.[DD_GAVE_UP_ANNOTATION] && phase === DataDownloadPhase.Completed) return { state: 'completed' };
  const error = dataDownloadError(dd);
  if (error) return { state: 'failed', error };
  if (ageMs(dd, opts.now) > opts.operationTimeoutMs) {
    return {
      state: 'give-up',
      error: `timed out after ${formatDuration(opts.operationTimeoutMs)} waiting for the data download of ${claimOf(dd)} (DataDownload ${ddName(dd)}, phase ${phase})`,
    };
  }
  return { state: 'waiting', why: `phase ${phase}` };
}

export interface DataDownloadWaitState extends VolumeRestoreTally {
  dataDownloads: DataDownload[];
}

export interface CheckDataDownloadsOptions {
  kube: Kube;
  /** The install namespace. */
  namespace: string;
  restore: Restore;
  now: Date;
  operationTimeoutMs: number;
  log: Logger;
}

/** Lists the restore's DataDownloads and judges each; cancels those past the operation timeout (marking them). */
export async function checkDataDownloads(opts: CheckDataDownloadsOptions): Promise<DataDownloadWaitState> {
  const client = customClient<DataDownload>(opts.kube, Kinds.DataDownload, parseDataDownload);
  const dds = await client.list(opts.namespace, `${Labels.RestoreUID}=${opts.restore.metadata.uid ?? ''}`);
  dds.sort((a, b) => ddName(a).localeCompare(ddName(b)));
  const dataDownloads = [...dds];
  const tally = await tallyVerdicts(
    dds,
    (dd) => judgeDataDownload({ dd, now: opts.now, operationTimeoutMs: opts.operationTimeoutMs }),
    async (dd, error) => {
      opts.log.warn(`Canceling DataDownload ${ddName(dd)}: ${error}`);
      // The state shows the DataDownload as patched: canceled, with the error on it.
      dataDownloads[dds.indexOf(dd)] = await client.patch(opts.namespace, ddName(dd), { metadata: { annotations: { [DD_GAVE_UP_ANNOTATION]: error } }, spec: { cancel: true } });
    },
  );
  return { dataDownloads, ...tally };
}
