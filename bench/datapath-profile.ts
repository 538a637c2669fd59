// One cairn backup and/or restore of a directory, in-process, printing wall time, CPU seconds (all threads of the
// process) and peak RSS: the quick before/after measurement for data-path changes (the full side-by-side comparison
// with restic and kopia is bench/datapath.ts). Usage:
//   node --import tsx bench/datapath-profile.ts --source DIR --work DIR [--restore] [--incremental] [--no-bundles] [--target DIR]
// A restore into <work>/restore measures what the root filesystem did before as much as the restore (see
// bench/datapath/fresh-fs.ts); --target names an empty directory to restore into instead (a freshly made filesystem).
import { mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getHeapSpaceStatistics } from 'node:v8';
import { FilesystemObjectStore } from '../src/plugins/object-store/index.js';
import { Repository } from '../src/datapath/repository.js';
import { backup } from '../src/datapath/uploader.js';
import { restore } from '../src/datapath/restorer.js';

const { values } = parseArgs({
  options: {
    source: { type: 'string' },
    work: { type: 'string' },
    restore: { type: 'boolean', default: false },
    incremental: { type: 'boolean', default: false },
    'restore-only': { type: 'boolean', default: false },
    /** Print RSS and heap each time another 100,000 files are done (memory checks). */
    'rss-every': { type: 'string' },
    /** Pack size of the new repository in MiB (default: the repository default). */
    'pack-mib': { type: 'string' },
    /** A new repository without the bundles feature (a blob per small file), to compare. */
    'no-bundles': { type: 'boolean', default: false },
    /** Restore into this empty directory (kept) instead of <work>/restore. */
    target: { type: 'string' },
  },
});
if (!values.source || !values.work) throw new Error('--source DIR --work DIR are required');
const work = values.work;
const repoDir = join(work, 'repo');
const password = 'profile';
const kdf = { N: 1024, r: 8, p: 1 };

function measure(): () => { wall: number; cpu: number; mainCpu: number; rssMb: number } {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const m0 = process.threadCpuUsage();
  return () => {
    const c = process.cpuUsage(c0);
    // The main thread's own CPU: when it is near the wall time, the main thread is the bottleneck.
    const m = process.threadCpuUsage(m0);
    return { wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, mainCpu: (m.user + m.system) / 1e6, rssMb: process.resourceUsage().maxRSS / 1024 };
  };
}

const fmt = (label: string, files: number, m: { wall: number; cpu: number; mainCpu: number; rssMb: number }) =>
  `${label}: ${files} files in ${m.wall.toFixed(2)} s wall (${Math.round(files / m.wall)} files/s), ${m.cpu.toFixed(2)} CPU-s (main thread ${m.mainCpu.toFixed(2)}), peak RSS ${Math.round(m.rssMb)} MB`;

mkdirSync(work, { recursive: true });
const store = new FilesystemObjectStore({ root: repoDir });
if (!values['restore-only']) {
  if (!values.incremental && existsSync(repoDir)) rmSync(repoDir, { recursive: true, force: true });
  const repo = values.incremental && existsSync(repoDir) ? await Repository.open({ store, password }) : await Repository.init({ store, password, kdf, ...(values['pack-mib'] ? { packSize: Number(values['pack-mib']) << 20 } : {}), ...(values['no-bundles'] ? { features: [] } : {}) });
  const done = measure();
  const every = Number(values['rss-every'] ?? 0);
  let next = every;
  const r = await backup({
    source: values.source,
    repository: repo,
    ...(every > 0
      ? {
          progressIntervalMs: 0,
          onProgress: (p: { doneFiles: number }) => {
            if (p.doneFiles < next) return;
            next += every;
            const m = process.memoryUsage();
            const spaces = getHeapSpaceStatistics().map((x) => `${x.space_name.replace('_space', '')} ${Math.round(x.space_size / 1e6)}`);
            const status = readFileSync('/proc/self/status', 'utf8');
            const kb = (k: string) => Math.round(Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
            console.log(`  ${p.doneFiles} files: anon ${kb('RssAnon')} MB, file ${kb('RssFile')} MB, RSS ${Math.round(m.rss / 1e6)} MB, heap used ${Math.round(m.heapUsed / 1e6)} MB of ${Math.round(m.heapTotal / 1e6)} (${spaces.join(', ')}), external ${Math.round(m.external / 1e6)} MB`);
          },
        }
      : {}),
  });
  console.log(fmt('backup', r.stats.files, done()));
}
if (values.restore || values['restore-only']) {
  const target = values.target ?? join(work, 'restore');
  // The previous restore is deleted first (not timed); keeping it aside filled the disk.
  if (!values.target && existsSync(target)) rmSync(target, { recursive: true, force: true });
  const repo = await Repository.open({ store, password });
  const done = measure();
  const r = await restore({ repository: repo, snapshotId: 'latest', target });
  console.log(fmt('restore', r.stats.files, done()));
  if (r.errors.length) console.log(`restore errors: ${r.errors.length}, first: ${JSON.stringify(r.errors[0])}`);
}
