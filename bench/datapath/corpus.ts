// The text corpus the small files are sliced from (docs/benchmarks.md, Datasets): *.py and *.h files under 200 KiB from
// /usr/lib/python3* and /usr/include, the first 20,000 in sorted path order, concatenated. Sorted (not `find`
// order) so two machines with the same packages build the same corpus; its hash goes into every recipe hash.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, lstatSync } from 'node:fs';
import { join } from 'node:path';

export interface Corpus {
  bytes: Buffer;
  files: number;
  sha256: string;
}

const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 200 * 1024;

function corpusRoots(): string[] {
  const pythonDirs = readdirSync('/usr/lib')
    .filter((name) => name.startsWith('python3'))
    .sort()
    .map((name) => join('/usr/lib', name));
  return [...pythonDirs, '/usr/include'];
}

function collectSourceFiles(dir: string, into: string[]): void {
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
    if (stat.isDirectory()) collectSourceFiles(path, into);
    else if (stat.isFile() && stat.size < MAX_FILE_BYTES && (name.endsWith('.py') || name.endsWith('.h'))) into.push(path);
  }
}

let cached: Corpus | undefined;

export function loadCorpus(): Corpus {
  if (cached) return cached;
  const paths: string[] = [];
  for (const root of corpusRoots()) collectSourceFiles(root, paths);
  paths.sort();
  const chosen = paths.slice(0, MAX_FILES);
  const bytes = Buffer.concat(chosen.map((path) => readFileSync(path)));
  if (bytes.length < 1024 * 1024) throw new Error(`text corpus too small (${bytes.length} bytes from ${chosen.length} files)`);
  cached = { bytes, files: chosen.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  return cached;
}
