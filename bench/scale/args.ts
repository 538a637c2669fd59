// Command-line options of `npm run bench:scale`. Pure, so the parsing is unit-testable.
export interface ScaleArgs {
  help: boolean;
  /** Namespaces the bench creates, each with ITEMS_PER_NAMESPACE items. */
  namespaces: number;
  /** Namespaces the partial restore brings back (the first ones, mapped to new names). */
  restoreNamespaces: number;
  /** Run the real Velero server beside cairn (built from the Go module proxy). */
  velero: boolean;
  /** Use the running cluster of `npm run cluster:up -- --runtime local` instead of starting a fresh one. */
  reuse: boolean;
  /** Keep the fresh cluster's run directory (logs) after the run. */
  keep: boolean;
  /** Environment variables for cairn's server (e.g. NODE_OPTIONS with a heap size to try), none by default. */
  serverEnv: string[];
}

export const SCALE_USAGE = `npm run bench:scale [-- options]

Control-plane scale: backs up N namespaces of small objects (12 each) and restores a part of them, through cairn's
server and the real Velero server side by side on one local cluster; prints each one's time, items per second, the
time from create to InProgress, and each server's peak and idle memory (RSS).

  --namespaces N          namespaces to create and back up (default 2500)
  --restore-namespaces M  namespaces the partial restore brings back, under new names (default 500)
  --no-velero             measure cairn alone
  --reuse                 use the cluster of \`npm run cluster:up -- --runtime local\` (default: a fresh 1-node cluster)
  --keep                  keep the fresh cluster's run directory (logs) afterwards
  --server-env NAME=VALUE an environment variable for cairn's server, e.g. NODE_OPTIONS=--max-old-space-size=160
                          (to try runtime settings; repeatable)
  --help
`;

export class ScaleUsageError extends Error {}

export function parseScaleArgs(argv: readonly string[]): ScaleArgs {
  const args: ScaleArgs = { help: false, namespaces: 2500, restoreNamespaces: 500, velero: true, reuse: false, keep: false, serverEnv: [] };
  const count = (flag: string, value: string | undefined): number => {
    const n = Number(value);
    if (value === undefined || !Number.isInteger(n) || n < 1) throw new ScaleUsageError(`${flag}: expected a positive whole number, got ${value ?? 'nothing'}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    switch (arg) {
      case '--help':
      case '-h':
        args.help = true;
        break;
      case '--namespaces':
        args.namespaces = count(arg, argv[++i]);
        break;
      case '--restore-namespaces':
        args.restoreNamespaces = count(arg, argv[++i]);
        break;
      case '--no-velero':
        args.velero = false;
        break;
      case '--reuse':
        args.reuse = true;
        break;
      case '--keep':
        args.keep = true;
        break;
      case '--server-env': {
        const value = argv[++i];
        if (!value || !/^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) throw new ScaleUsageError(`${arg}: expected NAME=VALUE, got ${value ?? 'nothing'}`);
        args.serverEnv.push(value);
        break;
      }
      default:
        throw new ScaleUsageError(`unknown option ${arg ?? ''}`);
    }
  }
  if (args.restoreNamespaces > args.namespaces) throw new ScaleUsageError(`--restore-namespaces ${args.restoreNamespaces} is more than --namespaces ${args.namespaces}`);
  return args;
}
