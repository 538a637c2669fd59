// Command-line options of `npm run bench:datapath -- ...`.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DATASET_NAMES, type DatasetName } from './datasets.js';
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
  /** Only print the report of an earlier results JSON. */
  report?: string;
  help: boolean;
}

export const USAGE = `usage: npm run bench:datapath -- [options]

  --dataset LIST   datasets to run, comma-separated: ${DATASET_NAMES.join(', ')} (default: mixed)
  --all            every dataset (mixed, large 2 GiB, small 200k files, tiny 1M files)
  --store LIST     fs, s3 (default: fs,s3; s3 needs the MinIO binary the test bed builds)
  --tools LIST     cairn, restic, kopia (default: all three)
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
  const { values } = parseArgs({
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
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new BenchUsageError(`--runs: expected a whole number from 1 to 20, got "${values.runs}"`);
  const datasets = values.all ? [...DATASET_NAMES] : list(values.dataset, DATASET_NAMES, ['mixed'], 'dataset');
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
    ...(values.report ? { report: resolve(values.report) } : {}),
    help: values.help,
  };
}
