// `npm run bench:kopia-restore [-- --dataset mixed|large|small] [--runs N] [--storage fs|minio|both] [--restore-dir DIR] [--kopia-cache cold|warm]`: restoring a
// snapshot of a Velero kopia repository, cairn's reader against `kopia snapshot restore`, side by side on the same
// repository and the same data. The repository is made by the kopia Velero v1.17 bundles (tools/peers/velero-kopia.ts)
// with Velero's settings, on a filesystem and on MinIO on loopback. Each run restores into a new empty directory, both
// tools in alternating order; kopia's local cache is cleared before each of its runs (a data mover pod starts with
// none; `--kopia-cache warm` keeps it, so kopia's later runs read contents it cached on disk), cairn reads through the retrying store its data movers use; every restore is checked against the dataset,
// and a cairn restore that reports a path it could not restore fails the bench. `--restore-dir` puts the restored
// trees on another file system (see docs/benchmarks.md: ext4 without a journal makes file creation slow after many
// deletions). The machine is shared, so the load
// average during each measurement is printed next to it. See docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, homedir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { KopiaRepository } from '../src/datapath/kopia/repository.js';
import { restoreKopiaSnapshot } from '../src/datapath/kopia/restore.js';
import { FilesystemObjectStore, RetryingObjectStore, S3ObjectStore, type ObjectStore } from '../src/plugins/object-store/index.js';
import { createVeleroKopiaRepository, VELERO_DEFAULT_PASSWORD, veleroKopia, type KopiaStorage, type VeleroKopiaRepo } from '../tools/peers/velero-kopia.js';
import { loadCorpus } from './datapath/corpus.js';
import { makeDataset, type DatasetName } from './datapath/datasets.js';
import { prepareDataset } from './datapath/dataset-store.js';
import { findMinioBinary, startMinio, type MinioServer } from './datapath/minio.js';
import { acquireRunLock } from './datapath/run-lock.js';
import { digestTree, firstDifference } from './datapath/tree-digest.js';

const log = (line: string): void => void process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const { values } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'mixed' },
    runs: { type: 'string', default: '3' },
    storage: { type: 'string', default: 'both' },
    'data-dir': { type: 'string' },
    'restore-dir': { type: 'string' },
    'kopia-cache': { type: 'string', default: 'cold' },
  },
});
const datasetName = values.dataset as DatasetName;
const runs = Math.max(1, Number(values.runs));
const dataDir = resolve(values['data-dir'] ?? join(homedir(), '.cache', 'cairn', 'bench-data'));

interface Measured {
  seconds: number;
  /** 1-minute load average when the restore started and when it ended. */
  load: [number, number];
}

async function timed(fn: () => Promise<unknown>): Promise<Measured> {
  execFileSync('sync');
  const before = loadavg()[0]!;
  const started = process.hrtime.bigint();
  await fn();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, load: [before, loadavg()[0]!] };
}

async function benchStorage(opts: { label: string; storage: KopiaStorage; store: ObjectStore; source: string; work: string; restoreDir: string }): Promise<{ label: string; kopia: Measured[]; cairn: Measured[] }> {
  log(`${opts.label}: creating the repository with Velero's kopia and snapshotting ${opts.source} ...`);
  const repo: VeleroKopiaRepo = await createVeleroKopiaRepository(opts.storage);
  const snapshotId = await repo.snapshot(opts.source);
  const want = digestTree(opts.source);
  const kopia: Measured[] = [];
  const cairn: Measured[] = [];
  const check = (target: string, who: string) => {
    const got = digestTree(target);
    if (got.sha256 !== want.sha256) throw new Error(`${who} restored something else: first difference ${firstDifference(opts.source, target) ?? '?'}`);
  };
  for (let i = 0; i < runs; i++) {
    // Alternate who goes first, so neither always gets the warmer caches.
    const order = i % 2 === 0 ? (['kopia', 'cairn'] as const) : (['cairn', 'kopia'] as const);
    for (const who of order) {
      const target = join(opts.restoreDir, `restore-${who}-${i}`);
      rmSync(target, { recursive: true, force: true });
      const m =
        who === 'kopia'
          ? await timed(() => repo.restore(snapshotId, target, undefined, values['kopia-cache'] !== 'warm'))
          : await timed(async () => {
              const repository = await KopiaRepository.open({ store: opts.store, password: VELERO_DEFAULT_PASSWORD });
              const result = await restoreKopiaSnapshot({ repository, snapshotId, target });
              if (result.errors.length) throw new Error(`cairn could not restore ${result.errors.length} paths, first ${result.errors[0]!.path}: ${result.errors[0]!.reason}`);
            });
      check(target, who);
      (who === 'kopia' ? kopia : cairn).push(m);
      log(`${opts.label} run ${i + 1}/${runs} ${who}: ${m.seconds.toFixed(2)} s (load ${m.load[0].toFixed(2)} → ${m.load[1].toFixed(2)})`);
      rmSync(target, { recursive: true, force: true });
    }
  }
  return { label: opts.label, kopia, cairn };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const release = await acquireRunLock({ dataDir, log });
  const work = join(dataDir, 'kopia-restore');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const restoreDir = values['restore-dir'] ? mkdtempSync(join(resolve(values['restore-dir']), 'kopia-restore-')) : work;
  let minio: MinioServer | undefined;
  try {
    veleroKopia();
    const corpus = loadCorpus();
    const stored = prepareDataset({ dataset: makeDataset(datasetName, corpus.bytes), scratchDir: join(dataDir, 'datasets'), corpusSha256: corpus.sha256, log });
    const results: Awaited<ReturnType<typeof benchStorage>>[] = [];
    if (values.storage !== 'minio') {
      const path = join(work, 'repo-fs');
      mkdirSync(path, { recursive: true });
      results.push(await benchStorage({ label: 'filesystem', storage: { kind: 'filesystem', path }, store: new RetryingObjectStore(new FilesystemObjectStore({ root: path })), source: stored.root, work, restoreDir }));
    }
    const minioBinary = values.storage !== 'fs' ? findMinioBinary() : undefined;
    if (values.storage !== 'fs' && !minioBinary) log('MinIO is not built (the test bed builds it); skipping the MinIO runs');
    if (minioBinary) {
      minio = await startMinio(minioBinary, join(work, 'minio'));
      const loc = minio.location('velero/kopia/app');
      const store = new RetryingObjectStore(new S3ObjectStore({ bucket: loc.bucket, prefix: `${loc.prefix}/`, endpoint: loc.endpoint, region: loc.region, forcePathStyle: true, credentials: { accessKeyId: loc.accessKeyId, secretAccessKey: loc.secretAccessKey } }));
      results.push(
        await benchStorage({
          label: 'MinIO',
          storage: { kind: 's3', bucket: loc.bucket, prefix: `${loc.prefix}/`, endpoint: loc.endpoint, accessKeyId: loc.accessKeyId, secretAccessKey: loc.secretAccessKey, region: loc.region },
          store,
          source: stored.root,
          work,
          restoreDir,
        }),
      );
    }
    const out: string[] = [];
    out.push(`kopia-repository restore: ${stored.dataset.title} (${(stored.base.bytes / 2 ** 30).toFixed(2)} GiB, ${stored.base.files} files), ${runs} runs each, ${availableParallelism()} CPUs`);
    out.push('storage      kopia snapshot restore   cairn (kopia reader)   ratio kopia/cairn   load (1-min avg during runs)');
    for (const r of results) {
      const k = median(r.kopia.map((m) => m.seconds));
      const c = median(r.cairn.map((m) => m.seconds));
      const loads = [...r.kopia, ...r.cairn].flatMap((m) => m.load);
      out.push(
        `${r.label.padEnd(12)} ${`${k.toFixed(2)} s`.padEnd(24)} ${`${c.toFixed(2)} s`.padEnd(22)} ${`${(k / c).toFixed(2)}x`.padEnd(19)} ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
      );
    }
    out.push(`(medians; a ratio above 1 means cairn restored faster; kopia runs as its CLI with a ${values['kopia-cache'] === 'warm' ? 'warm' : 'cleared'} cache, cairn in this process, both opening the repository each time; restored into ${restoreDir})`);
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await minio?.stop();
    rmSync(work, { recursive: true, force: true });
    rmSync(restoreDir, { recursive: true, force: true });
    release();
  }
}

await main();
