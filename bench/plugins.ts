// `npm run bench:plugins [-- --items N --runs N]`: the storage side of a backup through Velero's AWS plugin (run
// unchanged, as cairn's server runs it: a plugin process spoken to over gRPC) versus cairn's built-in S3 store, on
// the same data against the same MinIO, in the same run. Each round writes one backup as the backup controller does
// (log, velero-backup.json, the tarball, the JSON files: BackupStore.putBackup), then reads it back as a restore
// does (metadata, the tarball streamed), then lists the location as backup sync does. The two stores alternate
// within each round; the report is the median per step, both figures and plugin/built-in. Progress on stderr; the
// report on stdout and in bench/results/plugins-<date>.json. See docs/benchmarks.md.
import { copyFileSync, createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { createLogger } from '../src/base/logger.js';
import { newBackupStorageLocation, type Backup, type BackupStorageLocation } from '../src/api/index.js';
import { ExternalPlugins } from '../src/plugins/external/index.js';
import { BackupArchiveWriter } from '../src/server/archive/writer.js';
import { BackupStore } from '../src/storage/backup-store.js';
import { openLocationStore } from '../src/storage/location-store.js';
import { ensureToolBinary } from '../tools/local-cluster/toolchain.js';
import { findMinioBinary, startMinio } from './datapath/minio.js';

const log = (line: string) => process.stderr.write(`[bench:plugins] ${line}\n`);

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '4000' },
    runs: { type: 'string', default: '3' },
    out: { type: 'string' },
  },
});
const ITEMS = Number(values.items);
const RUNS = Number(values.runs);

type Step = 'write backup' | 'read backup' | 'list location';
const STEPS: Step[] = ['write backup', 'read backup', 'list location'];

/** A backup's archive of ITEMS config maps (a few KB each, some larger), the shape item collection produces. */
async function makeArchive(dir: string): Promise<{ path: string; size: number }> {
  const archive = await BackupArchiveWriter.create({ tmpDir: dir });
  for (let i = 0; i < ITEMS; i++) {
    const big = i % 50 === 0;
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: `ns-${i % 20}`, labels: { app: `app-${i % 7}` } },
      data: { payload: randomBytes(big ? 96 * 1024 : 1500).toString('base64') },
    };
    await archive.addItem({ groupResource: 'configmaps', namespace: object.metadata.namespace, name: object.metadata.name, version: 'v1', object });
  }
  const finished = await archive.finish();
  // The archive's temporary file is kept for the whole run (dispose() would remove it).
  return { path: finished.path, size: finished.size };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  const minioBinary = findMinioBinary();
  if (!minioBinary) throw new Error('no MinIO binary: run `node --import tsx tools/local-cluster/cli.ts setup` first');
  const work = mkdtempSync(join(tmpdir(), 'cairn-bench-plugins-'));
  const minio = await startMinio(minioBinary, join(work, 'minio'));
  const pluginDir = join(work, 'plugins');
  mkdirSync(pluginDir);
  copyFileSync(await ensureToolBinary('veleroPluginForAws', log), join(pluginDir, 'velero-plugin-for-aws'));
  const quiet = createLogger({ level: 'warn' });
  const plugins = await ExternalPlugins.discover(pluginDir, { log: quiet, callTimeoutMs: 10 * 60_000, args: ['--log-level=warning'] });
  const session = plugins.session({ logs: [quiet] });
  try {
    log(`building an archive of ${ITEMS} items`);
    const archive = await makeArchive(work);
    log(`archive: ${(archive.size / 1e6).toFixed(1)} MB`);
    const s3 = minio.location('unused');
    const creds = join(work, 'credentials');
    writeFileSync(creds, `[default]\naws_access_key_id = ${s3.accessKeyId}\naws_secret_access_key = ${s3.secretAccessKey}\n`, { mode: 0o600 });
    const location = (prefix: string): BackupStorageLocation =>
      newBackupStorageLocation({
        namespace: 'velero',
        name: prefix,
        spec: { provider: 'aws', objectStorage: { bucket: s3.bucket, prefix }, config: { region: s3.region, s3Url: s3.endpoint, s3ForcePathStyle: 'true' }, accessMode: 'ReadWrite' },
      });
    const env = { AWS_SHARED_CREDENTIALS_FILE: creds };
    process.env.AWS_SHARED_CREDENTIALS_FILE = creds;
    const stores = {
      'built-in S3': new BackupStore(await openLocationStore({ location: location('builtin'), env })),
      'AWS plugin': new BackupStore(
        await openLocationStore({ location: location('plugin'), env, plugins: { external: plugins, session, preferred: new Set(['velero.io/aws']) } }),
      ),
    };
    const times: Record<string, Record<Step, number[]>> = {};
    for (const name of Object.keys(stores)) times[name] = { 'write backup': [], 'read backup': [], 'list location': [] };
    const backup = (name: string): Backup => ({ apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name, namespace: 'velero' }, spec: {}, status: { phase: 'Completed' } }) as Backup;
    const logText = 'time="..." level=info msg="Backing up item"\n'.repeat(ITEMS);
    /** One backup written, read back and the location listed through `which`: the time of each step. */
    const oneRound = async (which: keyof typeof stores, name: string): Promise<Record<Step, number>> => {
      const store = stores[which];
      let t = performance.now();
      await store.putBackup({
        name,
        metadata: backup(name),
        contents: createReadStream(archive.path),
        contentsLength: archive.size,
        log: logText,
        files: { results: { errors: {}, warnings: {} }, resourceList: { 'v1/ConfigMap': Array.from({ length: ITEMS }, (_, i) => `ns-${i % 20}/cm-${i}`) }, volumeInfo: [], itemOperations: [], podVolumeBackups: [], volumeSnapshots: [], csiVolumeSnapshotClasses: [] },
      });
      const write = performance.now() - t;
      t = performance.now();
      await store.getBackupMetadata(name);
      let bytes = 0;
      for await (const chunk of await store.getBackupContents(name)) bytes += (chunk as Buffer).length;
      if (bytes !== archive.size) throw new Error(`${which} read ${bytes} bytes of ${archive.size}`);
      const read = performance.now() - t;
      t = performance.now();
      const dirs = await store.listBackupDirs();
      for (const d of dirs) await store.backupExists(d);
      return { 'write backup': write, 'read backup': read, 'list location': performance.now() - t };
    };
    // A first round not counted: both stores open their connections (and the plugin its process) before timing.
    for (const which of Object.keys(stores) as (keyof typeof stores)[]) await oneRound(which, 'bench-warm-up');
    for (let round = 0; round < RUNS; round++) {
      // Alternate which store goes first, so neither always meets a warmer MinIO.
      const order = round % 2 ? (['AWS plugin', 'built-in S3'] as const) : (['built-in S3', 'AWS plugin'] as const);
      for (const which of order) {
        const took = await oneRound(which, `bench-${round}`);
        for (const step of STEPS) times[which]![step].push(took[step]);
        log(`round ${round + 1}/${RUNS} ${which}: write ${took['write backup'].toFixed(0)} ms, read ${took['read backup'].toFixed(0)} ms, list ${took['list location'].toFixed(0)} ms`);
      }
    }
    const mb = archive.size / 1e6;
    const rows = STEPS.map((step) => {
      const builtIn = median(times['built-in S3']![step]);
      const plugin = median(times['AWS plugin']![step]);
      return { step, builtInMs: Math.round(builtIn), pluginMs: Math.round(plugin), ratio: Number((plugin / builtIn).toFixed(2)) };
    });
    const lines = [
      `Storage side of a backup of ${ITEMS} items (${mb.toFixed(1)} MB tarball), MinIO on loopback, median of ${RUNS} rounds after one not counted`,
      `${'step'.padEnd(16)}${'built-in S3'.padStart(14)}${'AWS plugin'.padStart(14)}${'plugin/built-in'.padStart(18)}`,
      ...rows.map((r) => `${r.step.padEnd(16)}${`${r.builtInMs} ms`.padStart(14)}${`${r.pluginMs} ms`.padStart(14)}${`${r.ratio.toFixed(2)}x`.padStart(18)}`),
      `tarball throughput: built-in ${(mb / (rows[0]!.builtInMs / 1000)).toFixed(1)} MB/s write, plugin ${(mb / (rows[0]!.pluginMs / 1000)).toFixed(1)} MB/s write`,
      `machine: ${availableParallelism()} cores, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const out = values.out ?? join('bench', 'results', `plugins-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    mkdirSync(join('bench', 'results'), { recursive: true });
    writeFileSync(out, JSON.stringify({ items: ITEMS, runs: RUNS, tarballBytes: archive.size, plugin: 'velero-plugin-for-aws v1.14.3', rows, times, load: loadavg() }, null, 2));
    log(`results in ${out}`);
  } finally {
    await session.close();
    await minio.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
