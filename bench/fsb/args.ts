// Command-line options of `npm run bench:fsb`. Pure, so the parsing is unit-testable.
export interface FsbArgs {
  help: boolean;
  /** Large random files in the volume, and their size in MiB. */
  bigCount: number;
  bigMiB: number;
  /** Small text files (1-16 KiB) in the volume. */
  smallCount: number;
  /** The real-tree dataset of bench:datapath at this size in MB instead of the scaled mixed one (0: mixed). */
  realMb: number;
  /** Use the running cluster of `npm run cluster:up -- --runtime local` instead of starting a fresh one. */
  reuse: boolean;
  /** Keep the fresh cluster's run directory (logs) after the run. */
  keep: boolean;
}

export const FSB_USAGE = `npm run bench:fsb [-- options]

End-to-end fs-backup and restore of one pod volume through the local cluster (node-agent, data-mover pod, events)
versus the data path alone (cairn repo backup/restore) on the same data; prints the per-volume overhead.

  --big N        large random files (default 5)
  --big-mib M    size of each large file in MiB (default 50)
  --small N      small text files of 1-16 KiB (default 5000)
  --scale F      multiply all three counts/sizes by F (e.g. 0.2 for a quick run)
  --real-mb N    instead, bench:datapath's real tree (files of this machine's Go module cache, node_modules and
                 binaries in their own many small directories) of about N MB
  --reuse        use the cluster of \`npm run cluster:up -- --runtime local\` (default: start a fresh 1-node cluster, stop it after)
  --keep         keep the fresh cluster's run directory (logs) afterwards
  --help
`;

export class FsbUsageError extends Error {}

export function parseFsbArgs(argv: readonly string[]): FsbArgs {
  const args: FsbArgs = { help: false, bigCount: 5, bigMiB: 50, smallCount: 5000, realMb: 0, reuse: false, keep: false };
  let scale = 1;
  const number = (flag: string, value: string | undefined): number => {
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n) || n < 0) throw new FsbUsageError(`${flag}: expected a non-negative number, got ${value ?? 'nothing'}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    switch (arg) {
      case '--help':
      case '-h':
        args.help = true;
        break;
      case '--big':
        args.bigCount = Math.round(number(arg, argv[++i]));
        break;
      case '--big-mib':
        args.bigMiB = number(arg, argv[++i]);
        break;
      case '--small':
        args.smallCount = Math.round(number(arg, argv[++i]));
        break;
      case '--scale':
        scale = number(arg, argv[++i]);
        break;
      case '--real-mb':
        args.realMb = number(arg, argv[++i]);
        break;
      case '--reuse':
        args.reuse = true;
        break;
      case '--keep':
        args.keep = true;
        break;
      default:
        throw new FsbUsageError(`unknown option ${arg ?? ''} (see --help)`);
    }
  }
  if (scale !== 1) {
    args.bigCount = Math.max(1, Math.round(args.bigCount * scale));
    args.smallCount = Math.round(args.smallCount * scale);
  }
  if (args.bigCount === 0 && args.smallCount === 0) throw new FsbUsageError('the volume would be empty: give --big or --small');
  return args;
}
