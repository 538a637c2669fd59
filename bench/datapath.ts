// `npm run bench:datapath [-- options]`: cairn, restic and kopia side by side on the same generated datasets,
// against a filesystem repository and MinIO on loopback. Progress goes to stderr; the report to stdout and to
// bench/results/<date>.json. See docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, release, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchUsageError, parseBenchArgs, USAGE, type BenchArgs } from './datapath/args.js';
import { acquireRunLock } from './datapath/run-lock.js';
import { loadCorpus } from './datapath/corpus.js';
import { makeDataset, type DatasetName } from './datapath/datasets.js';
import { prepareDataset, type StoredDataset } from './datapath/dataset-store.js';
import {
  cleanLeftoverFilesystems,
  freshFilesystemDescription,
  freshFilesystemsUnavailable,
  probeFreshFilesystems,
} from './datapath/fresh-fs.js';
import { findMinioBinary, startMinio, type MinioServer } from './datapath/minio.js';
import { renderReport, renderTargetChecks, targetChecks } from './datapath/report.js';
import type { BenchRun, DatasetInfo, ScenarioResult, ToolDescription } from './datapath/results.js';
import { defaultRealSources, loadOrBuildRealManifest } from './datapath/real-dataset.js';
import { runInterleaved, Scenario, type ScenarioOptions } from './datapath/scenario.js';
import { cairnTool } from './datapath/tools/cairn.js';
import { kopiaTool } from './datapath/tools/kopia.js';
import { newestResticBinary, resticTool } from './datapath/tools/restic.js';
import { loadAverageText, startCpuLoad, type CpuLoad } from './datapath/cpu-load.js';
import type { Availability, BackupTool, ToolName } from './datapath/tools/types.js';
import { Trash } from './datapath/trash.js';
import { digestTree, type TreeDigest } from './datapath/tree-digest.js';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const log = (line: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

function installPeer(script: string): void {
  log(`installing with ${script} ...`);
  execFileSync('bash', [join(projectRoot, script)], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Builds cairn when its repo commands exist in src/ but were never built (a fresh clone). */
function buildCairnIfNeeded(force: boolean): void {
  const source = join(projectRoot, 'src', 'commands', 'repo', 'backup.ts');
  const built = join(projectRoot, 'dist', 'commands', 'repo', 'backup.js');
  if (!existsSync(source)) return;
  if (!force && existsSync(built)) {
    if (statSync(built).mtimeMs < statSync(source).mtimeMs) log('note: dist/ looks older than src/; pass --build to rebuild cairn first');
    return;
  }
  log('building cairn (npm run build) ...');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * Decides what restores go into and says so in the notes: a fresh filesystem each time (fresh-fs.ts) unless
 * --no-fresh-fs was given or one cannot be made here. Unmounts and deletes what an interrupted run left first.
 */
function setUpRestoreTargets(args: BenchArgs, notes: string[]): ScenarioOptions['freshFilesystems'] {
  const plainDirectory =
    'restores go into a new directory under <data-dir>/runs on the scratch filesystem, whose restore figures ' +
    'swing by up to 2x with recent deletions (docs/datapath.md, "How a restore runs").';
  let unavailable = freshFilesystemsUnavailable();
  if (!unavailable) {
    try {
      for (const line of cleanLeftoverFilesystems(args.dataDir)) log(`fresh-fs leftover of an earlier run: ${line}`);
    } catch (error) {
      unavailable = `leftovers of an earlier run could not be removed: ${(error as Error).message}`;
    }
  }
  if (!args.freshFs) {
    notes.push(`--no-fresh-fs: ${plainDirectory}`);
    return undefined;
  }
  if (!unavailable) {
    const probed = probeFreshFilesystems(args.dataDir);
    if (!probed.available) unavailable = probed.reason;
  }
  if (unavailable) {
    log(`fresh filesystems not available: ${unavailable}`);
    notes.push(`Fresh filesystems were not available (${unavailable}): ${plainDirectory}`);
    return undefined;
  }
  notes.push(freshFilesystemDescription());
  const reported = new Set<string>();
  return {
    onFailure: (reason) => {
      log(`fresh filesystem failed, restoring into a directory instead: ${reason}`);
      if (reported.has(reason)) return;
      reported.add(reason);
      notes.push(`A fresh filesystem could not be made for a restore (${reason}); it went into a plain directory ("into" in the results JSON).`);
    },
  };
}

function dropPageCache(): void {
  try {
    execFileSync('sh', ['-c', 'sync && echo 3 > /proc/sys/vm/drop_caches'], { stdio: 'ignore' });
  } catch {
    log('note: could not drop the page cache (not root, or not allowed here)');
  }
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (args.report) {
    process.stdout.write(renderRun(JSON.parse(readFileSync(args.report, 'utf8')) as BenchRun, args.report));
    return;
  }
  const releaseLock = await acquireRunLock({ dataDir: args.dataDir, log });
  try {
    await runBench(args);
  } finally {
    releaseLock();
  }
}

async function runBench(args: BenchArgs): Promise<void> {
  const startedAt = new Date();
  const tools: BackupTool[] = [];
  const descriptions: ToolDescription[] = [];
  const availability = new Map<ToolName, Availability>();

  if (args.tools.includes('cairn')) buildCairnIfNeeded(args.build);
  const candidates: Record<ToolName, () => BackupTool> = {
    cairn: () => cairnTool(projectRoot),
    'cairn-before': () => cairnTool(args.baseline ?? projectRoot, 'cairn-before'),
    restic: () => resticTool(),
    'restic-new': () => resticTool(newestResticBinary(), 'restic-new'),
    kopia: () => kopiaTool(),
  };
  const installers: Partial<Record<ToolName, string>> = {
    restic: 'tools/peers/install-restic.sh',
    'restic-new': 'tools/peers/install-restic-latest.sh',
    kopia: 'tools/peers/install-kopia.sh',
  };
  for (const name of args.baseline ? [...args.tools, 'cairn-before' as const] : args.tools) {
    let tool = candidates[name]();
    let probed = await tool.probe();
    const installer = installers[name];
    if (!probed.available && installer && args.install) {
      installPeer(installer);
      tool = candidates[name]();
      probed = await tool.probe();
    }
    availability.set(name, probed);
    tools.push(tool);
    descriptions.push(
      probed.available
        ? { name, available: true, version: probed.version, settings: probed.settings }
        : { name, available: false, reason: probed.reason },
    );
    log(probed.available ? `${name}: ${probed.version}` : `${name}: ${probed.reason}`);
  }

  // MinIO starts right before the first S3 scenario and is checked (and restarted if need be) before each one.
  let minio: MinioServer | undefined;
  let minioVersion: string | undefined;
  const minioBinary = args.stores.includes('s3') ? findMinioBinary() : undefined;
  const readyMinio = async (): Promise<{ server?: MinioServer; skip?: string }> => {
    if (!minioBinary) return { skip: 'skipped: minio not built' };
    if (minio && (await minio.healthy())) return { server: minio };
    if (minio) {
      log('minio: not answering; restarting it');
      await minio.stop();
      minio = undefined;
    }
    try {
      minio = await startMinio(minioBinary, join(args.dataDir, `minio-data-${process.pid}`));
      minioVersion = minio.version;
      log(`minio: ${minio.version} at ${minio.endpoint}`);
      return { server: minio };
    } catch (error) {
      return { skip: `skipped: minio did not start (${(error as Error).message})` };
    }
  };

  const notes = [
    `First backups and restores are single runs; unchanged and 5%-changed runs are the median of ${args.runs}. Treat differences under ~10% as noise.`,
    'Times are whole commands from spawn to exit: process start, key derivation and repository open included.',
    'Page cache is warm: the data was just generated or read and fits in RAM; dropping it between runs is not reliable ' +
      `on this shared machine${args.dropCaches ? ' (--drop-caches was given: it was attempted before each first backup and restore)' : ''}.`,
    'MB = 10^6 bytes. Peak RSS = max of per-process VmHWM and sampled tree RSS (100 ms).',
    'S3 rows: MinIO runs on the same cores; its CPU seconds follow the "+" in the CPU column.',
    '"others CPU s" is what every other process on the machine used during the first backup (a shared machine is noisy).',
    'The tools run interleaved: every first backup, then every unchanged run (order rotated each round), then each ' +
      'change followed by every tool\'s backup of it, then every restore.',
    `At the start: ${loadAverageText()}.`,
  ];
  if (args.contended > 0) {
    notes.push(
      `Contended: ${args.contended} busy-loop process(es) (one per core unless told) competed for the CPU during every ` +
        'step of every tool; "others CPU s" includes them.',
    );
  }

  const trash = new Trash(join(args.dataDir, 'trash'));
  if (trash.pending) {
    log('deleting scratch left by an earlier run ...');
    await trash.empty();
  }
  const freshFilesystems = setUpRestoreTargets(args, notes);
  const datasetInfos: DatasetInfo[] = [];
  const results: ScenarioResult[] = [];
  const outFile = args.out ?? join(projectRoot, 'bench', 'results', `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  // Written after every scenario, so a run stopped half-way still leaves what it measured.
  const writeResults = (): BenchRun => {
    const run: BenchRun = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine: { cpus: availableParallelism(), memoryGiB: Math.round(totalmem() / 2 ** 30), kernel: release(), node: process.version },
      tools: descriptions,
      ...(minioVersion ? { minio: minioVersion } : {}),
      ...(args.contended > 0 ? { contended: args.contended } : {}),
      notes,
      datasets: datasetInfos,
      results,
    };
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, `${JSON.stringify(run, null, 2)}\n`);
    return run;
  };
  const interrupted = { value: false };
  process.once('SIGINT', () => {
    interrupted.value = true;
    log('interrupted: finishing the current step, then writing what was measured');
  });
  let cpuLoad: CpuLoad | undefined;
  try {
    const corpus = loadCorpus();
    for (const name of args.datasets) {
      if (interrupted.value) break;
      const dataset = makeDataset(name, corpus.bytes, () =>
        loadOrBuildRealManifest(args.dataDir, defaultRealSources(projectRoot), args.realBytes, log),
      );
      const stored: StoredDataset = prepareDataset({ dataset, scratchDir: args.dataDir, corpusSha256: corpus.sha256, log });
      datasetInfos.push(datasetInfo(name, stored));
      const digests = new Map<number, TreeDigest>();
      const modifiedDigest = (variant: number): TreeDigest => {
        const known = digests.get(variant) ?? digestTree(stored.root);
        digests.set(variant, known);
        return known;
      };
      for (const store of args.stores) {
        if (interrupted.value) break;
        const scenarios: Scenario[] = [];
        let server: MinioServer | undefined;
        if (store === 's3') {
          const ready = await readyMinio();
          if (!ready.server) {
            for (const tool of tools) results.push({ tool: tool.name, store, dataset: name, status: 'skipped', reason: ready.skip ?? 'skipped' });
            continue;
          }
          server = ready.server;
        }
        for (const tool of tools) {
          const probed = availability.get(tool.name)!;
          if (!probed.available) {
            results.push({ tool: tool.name, store, dataset: name, status: 'not available', reason: probed.reason });
            continue;
          }
          scenarios.push(
            new Scenario({
              tool,
              store,
              stored,
              scratchDir: args.dataDir,
              ...(server ? { minio: server } : {}),
              modifiedDigest,
              keepRepositories: args.keep,
              trash,
              ...(freshFilesystems ? { freshFilesystems } : {}),
              runs: args.runs,
              ...(args.dropCaches ? { beforeTimedStep: dropPageCache } : {}),
              log,
            }),
          );
        }
        log(`${name}/${store}: ${scenarios.map((sc) => sc.result.tool).join(', ')} interleaved; ${loadAverageText()}`);
        // The load runs only around the measured steps: preparing a dataset under it would just take longer.
        if (args.contended > 0) {
          cpuLoad = startCpuLoad(args.contended);
          log(`contended: ${args.contended} busy loop(s) running (pids ${cpuLoad.pids.join(', ')})`);
        }
        try {
          results.push(
            ...(await runInterleaved({ scenarios, stored, scratchDir: args.dataDir, runs: args.runs, interrupted: () => interrupted.value })),
          );
        } finally {
          await cpuLoad?.stop();
          cpuLoad = undefined;
        }
        writeResults();
      }
    }
  } finally {
    await cpuLoad?.stop();
    await minio?.stop();
  }
  notes.push(`At the end: ${loadAverageText()}.`);
  const run = writeResults();
  process.stdout.write(renderRun(run, outFile));
  if (trash.pending) {
    log('deleting restores and repositories (slow on a filesystem mounted with discard) ...');
    await trash.empty();
    log('done');
  }
}

/** The whole printed report of a run: tools and settings, notes, tables, target checks. */
function renderRun(run: BenchRun, outFile: string): string {
  const toolLines = run.tools.map((d) =>
    d.available ? `  ${d.name}: ${d.version ?? ''}; ${d.settings ?? ''}` : `  ${d.name}: ${d.reason ?? ''}`,
  );
  const s3Skipped = run.results.find((r) => r.store === 's3' && r.status === 'skipped');
  return [
    `cairn data-path benchmark, ${run.startedAt} (${run.machine.cpus} CPUs, ${run.machine.memoryGiB} GiB, node ${run.machine.node})`,
    'Tools:',
    ...toolLines,
    ...(run.minio ? [`  MinIO: ${run.minio}`] : s3Skipped ? [`  MinIO: ${s3Skipped.reason ?? ''}`] : []),
    'Notes:',
    ...run.notes.map((n) => `  - ${n}`),
    '',
    renderReport(run.datasets, run.results, run.machine.cpus),
    '',
    'Targets (docs/benchmarks.md):',
    renderTargetChecks(targetChecks(run.results, { contended: (run.contended ?? 0) > 0 })),
    '',
    `Results: ${outFile}`,
    '',
  ].join('\n');
}

function datasetInfo(name: DatasetName, stored: StoredDataset): DatasetInfo {
  return {
    name,
    title: stored.dataset.title,
    files: stored.base.files,
    bytes: stored.base.bytes,
    changedFiles: stored.modified.changedFiles,
    changedBytes: stored.modified.changedBytes,
    recipeHash: stored.recipeHash,
  };
}


main().catch((error: unknown) => {
  if (error instanceof BenchUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  log(`bench failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
