// Command-line options of `npm run bench:datapath -- ...`.
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DATASET_NAMES, GENERATED_DATASETS, type DatasetName } from './datasets.js';
import { STORE_NAMES, TOOL_NAMES, type StoreName, type ToolName } from './tools/types.js';

export interface BenchArgs {
  datasets: DatasetName[];
  stores: StoreName[];
  tools: ToolName[];
  dataDir: string;
  out?: string;
  keep: boolean;
  runs: number;
  install: boolean;
  build: boolean;
  dropCaches: boolean;
  /** Restore into a fresh ext4 filesystem (sparse image, loop device) each time; off with --no-fresh-fs. */
  freshFs: boolean;
  /** Busy-loop processes competing for the CPU during every step (0: none). */
  contended: number;
  /** Size of the real dataset, bytes. */
  realBytes: number;
  /** Only print the report of an earlier results JSON. */
  report?: string;
  /** Another cairn checkout (dist/ built) run beside this one as tool cairn-before: before/after from one run. */
  baseline?: string;
  help: boolean;
}

export const USAGE = `usage: npm run bench:datapath -- [options]

  --dataset LIST   datasets to run, comma-separated: ${DATASET_NAMES.join(', ')} (default: mixed)
                   real: Go modules, node_modules and toolchain binaries of this machine, copied into the data dir,
                   plus logs and a database file; its change is a dependency upgrade, a log rotation and a checkpoint
  --all            every generated dataset (mixed, large 2 GiB, small 200k files, tiny 1M files)
  --real-mb N      size of the real dataset in MB (default 1000; chosen once, kept in <data-dir>/real.manifest.json)
  --contended [N]  run N busy-loop processes (default: one per core) during every step of every tool
  --store LIST     fs, s3 (default: fs,s3; s3 needs the MinIO binary the test bed builds)
  --tools LIST     cairn, restic (Debian's), restic-new (newest, built from the Go module proxy), kopia (default: all)
  --baseline DIR   also run the cairn of another checkout (built: DIR/dist) as tool cairn-before, and print this
                   cairn's ratios to it: before/after figures from the same run (e.g. a worktree of main)
  --data-dir DIR   scratch dir for datasets, repositories and restores (default: ~/.cache/cairn/bench-data)
  --out FILE       results JSON (default: bench/results/<date>.json)
  --runs N         repeat the unchanged and the 5%-changed runs N times, report the median (default 3)
  --keep           keep repositories and tool caches under <data-dir>/runs
  --no-install     do not run tools/peers/install-*.sh for a missing peer
  --build          run \`npm run build\` before measuring cairn (done anyway when dist/ is missing)
  --report FILE    print the tables and target checks of an earlier results JSON, run nothing
  --drop-caches    try to drop the page cache before each first backup and each restore (root only)
  --no-fresh-fs    restore into a plain directory under <data-dir>/runs instead of a fresh ext4 filesystem
                   (sparse image on a loop device, made and removed around each restore; needs root, mkfs.ext4,
                   losetup; without them the bench falls back to a directory by itself and says so in the notes)
`;

export class BenchUsageError extends Error {
  override name = 'BenchUsageError';
}

function list<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T[], flag: string): T[] {
  if (value === undefined) return fallback;
  const items = value.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  for (const item of items) {
    if (!allowed.includes(item as T)) throw new BenchUsageError(`--${flag}: unknown value "${item}" (one of ${allowed.join(', ')})`);
  }
  return [...new Set(items)] as T[];
}

export function parseBenchArgs(argv: string[]): BenchArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      dataset: { type: 'string' },
      all: { type: 'boolean', default: false },
      store: { type: 'string' },
      tools: { type: 'string' },
      'data-dir': { type: 'string' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      runs: { type: 'string', default: '3' },
      'no-install': { type: 'boolean', default: false },
      build: { type: 'boolean', default: false },
      'drop-caches': { type: 'boolean', default: false },
      'no-fresh-fs': { type: 'boolean', default: false },
      report: { type: 'string' },
      contended: { type: 'boolean', default: false },
      'real-mb': { type: 'string', default: '1000' },
      baseline: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new BenchUsageError(`--runs: expected a whole number from 1 to 20, got "${values.runs}"`);
  const datasets = values.all ? [...GENERATED_DATASETS] : list(values.dataset, DATASET_NAMES, ['mixed'], 'dataset');
  const realMb = Number(values['real-mb']);
  if (!Number.isInteger(realMb) || realMb < 100) throw new BenchUsageError(`--real-mb: expected a whole number of at least 100, got "${values['real-mb']}"`);
  // `--contended 3` leaves "3" as a positional (node's parseArgs has no optional values): take it from there.
  const contendedCount = positionals.length > 0 ? Number(positionals[0]) : availableParallelism();
  if (positionals.length > 1 || (positionals.length === 1 && (!values.contended || !Number.isInteger(contendedCount) || contendedCount < 1))) {
    throw new BenchUsageError(`unexpected argument "${positionals.join(' ')}" (only --contended takes an optional count)`);
  }
  return {
    datasets,
    stores: list(values.store, STORE_NAMES, [...STORE_NAMES], 'store'),
    tools: list(values.tools, TOOL_NAMES, [...TOOL_NAMES], 'tools'),
    dataDir: resolve(values['data-dir'] ?? join(homedir(), '.cache', 'cairn', 'bench-data')),
    ...(values.out ? { out: resolve(values.out) } : {}),
    keep: values.keep,
    runs,
    install: !values['no-install'],
    build: values.build,
    dropCaches: values['drop-caches'],
    freshFs: !values['no-fresh-fs'],
    contended: values.contended ? contendedCount : 0,
    realBytes: realMb * 1e6,
    ...(values.report ? { report: resolve(values.report) } : {}),
    ...(values.baseline ? { baseline: resolve(values.baseline) } : {}),
    help: values.help,
  };
}
