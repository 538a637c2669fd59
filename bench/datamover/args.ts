// Command-line options of `npm run bench:datamover`: the same as bench:fsb's (dataset size, --reuse, --keep), so the
// two benches measure the same volume. Pure, so the parsing is unit-testable.
import { FsbUsageError, parseFsbArgs, type FsbArgs } from '../fsb/args.js';

export type DatamoverArgs = FsbArgs;

export const DATAMOVER_USAGE = `npm run bench:datamover [-- options]

CSI snapshot data movement of one volume through the local cluster (snapshot, DataUpload, node-agent, data-mover
pod; DataDownload and PV re-bind on restore) versus the data path alone (cairn repo backup/restore) on the same data:
a first backup, an incremental one after a small change, and a restore; kopia alone too (the uploader Velero's data
mover runs on) when tools/peers/install-kopia.sh has built it. Prints the figures and the ratios.

  --big N        large random files (default 5)
  --big-mib M    size of each large file in MiB (default 50)
  --small N      small text files of 1-16 KiB (default 5000)
  --scale F      multiply the file counts by F (e.g. 0.2 for a quick run)
  --reuse        use the cluster of \`npm run cluster:up -- --runtime local\` (default: start a fresh 1-node cluster, stop it after);
                 CSI is enabled on it if it is not yet
  --keep         keep the fresh cluster's run directory (logs) afterwards
  --help
`;

export class DatamoverUsageError extends Error {}

export function parseDatamoverArgs(argv: readonly string[]): DatamoverArgs {
  try {
    const args = parseFsbArgs(argv);
    // Its change between the two backups (change.ts) is made for the mixed set's files.
    if (args.realMb) throw new DatamoverUsageError('--real-mb is bench:fsb\'s alone: bench:datamover changes the mixed set\'s files between its backups');
    return args;
  } catch (err) {
    if (err instanceof FsbUsageError) throw new DatamoverUsageError(err.message);
    throw err;
  }
}
