// The `real` dataset: real third-party trees found on this machine (a Go module cache, a node_modules tree,
// toolchain binaries), copied into the bench's data dir at bench time and never committed, plus a log directory and a
// database file. Its change is what a volume really sees between two backups: one dependency upgraded (a whole
// module tree replaced by the next version's, as `go mod vendor` or `npm install` do), logs rotated, and a database
// checkpoint rewriting scattered pages of one large file.
//
// Which files are taken is decided once and written to a manifest in the data dir, so the dataset stays the same
// while the machine's caches grow; its hash is the recipe hash. Module cache trees are immutable once downloaded.
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Dataset, GeneratedFile } from './datasets.js';
import { KeyStream, Lcg } from './prng.js';

const MiB = 1024 * 1024;
const PIECE = 4 * MiB;

export interface ManifestFile {
  /** Path inside the dataset. */
  rel: string;
  /** Where its bytes come from. */
  src: string;
  size: number;
  mode: number;
}

export interface RealManifest {
  version: 1;
  budgetBytes: number;
  /** Copied trees and binaries (the bulk), in write order. */
  files: ManifestFile[];
  /** The upgraded dependency: its directory in the dataset and the versions it goes through (base first). */
  upgrade: { dir: string; module: string; versions: { version: string; files: ManifestFile[] }[] };
  logs: { dir: string; count: number; size: number };
  db: { rel: string; size: number; pageSize: number; pagesPerCheckpoint: number };
}

export interface RealSources {
  goModCache: string;
  nodeModules: string[];
  binDir: string;
}

export function defaultRealSources(projectRoot: string): RealSources {
  return {
    goModCache: process.env.GOMODCACHE ?? join(homedir(), 'go', 'pkg', 'mod'),
    nodeModules: [join(projectRoot, 'node_modules')],
    binDir: join(homedir(), '.cache', 'cairn', 'bin'),
  };
}

/** Regular files below `dir` in sorted order (symlinks and special files are left out: not every tool keeps them alike). */
function listFiles(dir: string, relBase: string, into: ManifestFile[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) listFiles(path, `${relBase}/${name}`, into);
    else if (stat.isFile()) into.push({ rel: `${relBase}/${name}`, src: path, size: stat.size, mode: (stat.mode & 0o755) | 0o600 });
  }
}

/** Module directories (`name@version`) of a Go module cache, sorted, without the download cache. */
function goModules(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string, rel: string, depth: number): void => {
    if (depth > 4) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (depth === 0 && name === 'cache') continue;
      const path = join(dir, name);
      if (!lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) continue;
      const relPath = rel ? `${rel}/${name}` : name;
      if (name.includes('@')) out.push(relPath);
      else visit(path, relPath, depth + 1);
    }
  };
  visit(root, '', 0);
  return out;
}

const sum = (files: ManifestFile[]): number => files.reduce((total, f) => total + f.size, 0);

/**
 * The dependency to upgrade: k8s.io/client-go when the cache has four versions of it, else the module with the
 * most versions (at least two) among those of 5-100 MB. Versions in the cache's (sorted) order.
 */
function pickUpgrade(root: string, modules: string[]): { module: string; versions: string[] } | undefined {
  const byModule = new Map<string, string[]>();
  for (const dir of modules) {
    const at = dir.lastIndexOf('@');
    const list = byModule.get(dir.slice(0, at)) ?? [];
    list.push(dir.slice(at + 1));
    byModule.set(dir.slice(0, at), list);
  }
  const sizeOf = (module: string, version: string): number => {
    const files: ManifestFile[] = [];
    listFiles(join(root, `${module}@${version}`), '', files);
    return sum(files);
  };
  const preferred = byModule.get('k8s.io/client-go');
  if (preferred && preferred.length >= 4) return { module: 'k8s.io/client-go', versions: preferred.slice(-4) };
  let best: { module: string; versions: string[] } | undefined;
  for (const [module, versions] of byModule) {
    if (versions.length < 2 || (best && versions.length <= best.versions.length)) continue;
    const size = sizeOf(module, versions[versions.length - 1]!);
    if (size >= 5 * MiB && size <= 100 * MiB) best = { module, versions: versions.slice(-4) };
  }
  return best;
}

/**
 * Chooses the files: about 55 % of the budget from the Go module cache (whole modules, in path order), 25 % from
 * node_modules (whole packages), 10 % toolchain binaries, the rest the upgraded module, logs and the database file.
 */
export function buildRealManifest(sources: RealSources, budgetBytes: number): RealManifest {
  const files: ManifestFile[] = [];
  const modules = goModules(sources.goModCache);
  const upgrade = pickUpgrade(sources.goModCache, modules);
  if (!upgrade) throw new Error(`real dataset: no module with two versions or more in ${sources.goModCache}`);
  const upgradeFamily = new Set(upgrade.versions.map((v) => `${upgrade.module}@${v}`));
  const take = (share: number, groups: Iterable<{ root: string; rel: string }>): void => {
    let taken = 0;
    for (const group of groups) {
      if (taken >= share * budgetBytes) break;
      const found: ManifestFile[] = [];
      listFiles(group.root, group.rel, found);
      const size = sum(found);
      if (taken + size > share * budgetBytes * 1.2) continue;
      files.push(...found);
      taken += size;
    }
  };
  take(
    0.55,
    modules.filter((m) => !upgradeFamily.has(m)).map((m) => ({ root: join(sources.goModCache, m), rel: `gomod/${m}` })),
  );
  const packages = sources.nodeModules.flatMap((dir, i) =>
    existsSync(dir)
      ? readdirSync(dir)
          .sort()
          .filter((name) => !name.startsWith('.'))
          .map((name) => ({ root: join(dir, name), rel: `app${i}/node_modules/${name}` }))
      : [],
  );
  take(0.25, packages);
  const binaries = existsSync(sources.binDir)
    ? readdirSync(sources.binDir)
        .sort()
        .map((name) => ({ root: join(sources.binDir, name), rel: `opt/bin/${name}` }))
    : [];
  take(0.1, binaries);
  const versions = upgrade.versions.map((version) => {
    const found: ManifestFile[] = [];
    listFiles(join(sources.goModCache, `${upgrade.module}@${version}`), '', found);
    return { version, files: found.map((f) => ({ ...f, rel: f.rel.slice(1) })) };
  });
  return {
    version: 1,
    budgetBytes,
    files,
    upgrade: { dir: `src/vendor/${upgrade.module}`, module: upgrade.module, versions },
    logs: { dir: 'var/log/app', count: 5, size: 8 * MiB },
    db: { rel: 'var/lib/db/data.db', size: 128 * MiB, pageSize: 8192, pagesPerCheckpoint: 600 },
  };
}

/** The manifest in the data dir, made on first use (and again when the budget changes or a source file is gone). */
export function loadOrBuildRealManifest(dataDir: string, sources: RealSources, budgetBytes: number, log: (line: string) => void): RealManifest {
  const path = join(dataDir, 'real.manifest.json');
  if (existsSync(path)) {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as RealManifest;
    const sample = [...manifest.files.filter((_, i) => i % 997 === 0), ...manifest.upgrade.versions.flatMap((v) => v.files.slice(0, 1))];
    if (manifest.version === 1 && manifest.budgetBytes === budgetBytes && sample.every((f) => existsSync(f.src))) return manifest;
    log('real dataset: the manifest is for another budget or its sources moved; choosing the files again');
  }
  const manifest = buildRealManifest(sources, budgetBytes);
  writeFileSync(path, `${JSON.stringify(manifest)}\n`);
  return manifest;
}

function copied(file: ManifestFile, rel = file.rel): GeneratedFile {
  return {
    relPath: rel,
    size: file.size,
    mode: file.mode,
    *chunks() {
      const fd = openSync(file.src, 'r');
      try {
        let left = file.size;
        while (left > 0) {
          const piece = Buffer.allocUnsafe(Math.min(PIECE, left));
          const n = readSync(fd, piece, 0, piece.length, null);
          if (n === 0) throw new Error(`${file.src}: shorter than when the dataset was chosen`);
          left -= n;
          yield piece.subarray(0, n);
        }
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** Log lines of one generation: timestamps, levels, request paths and IDs, as an application's access log. */
function logFile(rel: string, generation: number, size: number): GeneratedFile {
  return {
    relPath: rel,
    size,
    *chunks() {
      const lcg = new Lcg(9000 + generation);
      const levels = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'];
      const paths = ['/api/v1/orders', '/api/v1/users', '/healthz', '/metrics', '/api/v1/cart', '/static/app.js'];
      let done = 0;
      let t = Date.UTC(2026, 0, 1) + generation * 86_400_000;
      while (done < size) {
        const lines: string[] = [];
        let length = 0;
        while (length < 256 * 1024) {
          t += lcg.next() % 50;
          const line =
            `${new Date(t).toISOString()} ${levels[lcg.next() % levels.length]} req=${lcg.next().toString(16)} ` +
            `${paths[lcg.next() % paths.length]} status=${[200, 200, 201, 304, 404, 500][lcg.next() % 6]} ` +
            `dur_ms=${lcg.next() % 900} bytes=${lcg.next() % 65536}\n`;
          lines.push(line);
          length += line.length;
        }
        const piece = Buffer.from(lines.join('')).subarray(0, size - done);
        done += piece.length;
        yield piece;
      }
    },
  };
}

/**
 * The database file after `checkpoints` checkpoints: pages of compressible records (corpus text), each checkpoint
 * rewriting `pagesPerCheckpoint` pages scattered over the file with new bytes.
 */
function dbFile(manifest: RealManifest, corpus: Buffer, checkpoints: number): GeneratedFile {
  const { rel, size, pageSize, pagesPerCheckpoint } = manifest.db;
  const pages = size / pageSize;
  const written = new Map<number, number>();
  for (let c = 1; c <= checkpoints; c++) {
    const lcg = new Lcg(31337 + c);
    for (let i = 0; i < pagesPerCheckpoint; i++) written.set(lcg.next() % pages, c);
  }
  return {
    relPath: rel,
    size,
    *chunks() {
      const lcg = new Lcg(4711);
      const perPiece = PIECE / pageSize;
      for (let first = 0; first < pages; first += perPiece) {
        const count = Math.min(perPiece, pages - first);
        const piece = Buffer.allocUnsafe(count * pageSize);
        for (let p = 0; p < count; p++) {
          const offset = lcg.next() % (corpus.length - pageSize);
          corpus.copy(piece, p * pageSize, offset, offset + pageSize);
          const checkpoint = written.get(first + p);
          if (checkpoint !== undefined) {
            // A rewritten page: new records, half text, half fresh bytes (row versions, checksums).
            new KeyStream(`real/db/${checkpoint}/${first + p}`).take(pageSize / 2).copy(piece, p * pageSize + pageSize / 2);
          }
        }
        yield piece;
      }
    },
  };
}

export function realDataset(manifest: RealManifest, corpus: Buffer): Dataset {
  const { upgrade, logs } = manifest;
  const bulkBytes = sum(manifest.files);
  const upgradeFiles = (variant: number): GeneratedFile[] =>
    upgrade.versions[Math.min(variant, upgrade.versions.length - 1)]!.files.map((f) => copied(f, `${upgrade.dir}/${f.rel}`));
  const logName = (k: number): string => `${logs.dir}/app.log${k === 0 ? '' : `.${k}`}`;
  // app.log holds the newest generation; rotation k shifts every file one generation older.
  const logFiles = (rotations: number): GeneratedFile[] =>
    [...Array(logs.count).keys()].map((k) => logFile(logName(k), logs.count - 1 + rotations - k, logs.size));
  const total = bulkBytes + sum(upgrade.versions[0]!.files) + logs.count * logs.size + manifest.db.size;
  return {
    name: 'real',
    title:
      `real: Go modules, node_modules and binaries from this machine + logs + a database file, ` +
      `${(total / 1e6).toFixed(0)} MB; change: ${upgrade.module} ${upgrade.versions[0]!.version} -> next, logs rotated, db checkpoint`,
    recipe: { manifestVersion: manifest.version, files: manifest.files.map((f) => [f.rel, f.size, f.mode]), upgrade, logs, db: manifest.db },
    *files() {
      for (const file of manifest.files) yield copied(file);
      yield* upgradeFiles(0);
      yield* logFiles(0);
      yield dbFile(manifest, corpus, 0);
    },
    removedDirs() {
      return [upgrade.dir];
    },
    *modifiedFiles(variant = 1) {
      yield* upgradeFiles(variant);
      yield* logFiles(variant);
      yield dbFile(manifest, corpus, variant);
    },
    *baseOfModifiedFiles() {
      yield* upgradeFiles(0);
      yield* logFiles(0);
      yield dbFile(manifest, corpus, 0);
    },
  };
}
