/**
 * Debian packages the test bed and the image build use (buildah, runc, the CNI plugins, busybox...), fetched from
 * the machine's Debian archive into ~/.cache/cairn/debian and unpacked into a private prefix with `dpkg-deb -x`,
 * without installing anything system-wide: no root needed, nothing left on the machine outside the cache, and a
 * second machine with the same cache needs no network. What the machine already has installed is used from there.
 *
 * Resolution is apt's own: `apt-get install --simulate` lists what the packages need beyond what is installed, and
 * `apt-get download` fetches exactly those versions. Maintainer scripts do not run; every caller here needs only
 * the unpacked files (binaries, libraries, configuration templates).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { withFileLock } from './lock.js';
import { cacheRoot } from './paths.js';

const execFileAsync = promisify(execFile);

/** Where the .deb files are kept and the prefix they are unpacked into. */
export function debianDir(): string {
  return join(cacheRoot(), 'debian');
}

export function debianPrefix(): string {
  return join(debianDir(), 'root');
}

export interface DebianTools {
  /** The unpacked prefix (its usr/bin, usr/sbin, usr/lib/... hold the packages' files). */
  prefix: string;
  /** The path of `name` from the prefix if a package put it there, else from the system's PATH. */
  bin(name: string): string;
  /** Environment for running those binaries: PATH and LD_LIBRARY_PATH with the prefix first. */
  env(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

/** A Debian package that a tool needs and the machine cannot provide. */
export class DebianPackageError extends Error {}

export interface PackageVersion {
  name: string;
  version: string;
  arch: string;
}

/**
 * Makes the packages' files available (downloading and unpacking what the machine lacks) and returns how to run
 * them. Callers name packages, not files; the first call on a machine may take a minute, later ones are instant.
 */
export async function debianTools(packages: readonly string[], log: (line: string) => void): Promise<DebianTools> {
  mkdirSync(debianDir(), { recursive: true });
  await withFileLock({ path: join(debianDir(), '.lock'), timeoutMs: 20 * 60_000 }, async () => {
    const wanted = await resolvedOnce(packages);
    const todo = wanted.filter((p) => !existsSync(stampPath(p)));
    if (todo.length === 0) return;
    log(`fetching Debian packages: ${todo.map((p) => p.name).join(' ')}`);
    const debs = join(debianDir(), 'debs');
    mkdirSync(debs, { recursive: true });
    await run('apt-get', ['download', ...todo.map((p) => `${p.name}=${p.version}`)], debs);
    for (const p of todo) {
      await run('dpkg-deb', ['-x', join(debs, debFileName(p)), debianPrefix()], debs);
      writeFileSync(stampPath(p), '');
    }
  });
  return toolsAt(debianPrefix());
}

/**
 * What apt's state looks like: the installed set and the package lists. A resolution made under the same state is
 * still right (installing, removing or `apt-get update` changes one of them).
 */
function aptFingerprint(): string {
  const parts = ['/var/lib/dpkg/status', '/var/lib/apt/lists', '/var/cache/apt/pkgcache.bin'].map((f) => {
    try {
      const st = statSync(f);
      return `${f}:${st.size}:${st.mtimeMs}`;
    } catch {
      return `${f}:-`;
    }
  });
  return parts.join(' ');
}

/**
 * missingPackages, kept in the cache for the same package set and apt state: apt's resolution takes seconds of CPU,
 * and every cluster start and image build asks for it.
 */
export async function resolvedOnce(
  packages: readonly string[],
  resolve: (packages: readonly string[]) => Promise<PackageVersion[]> = missingPackages,
  fingerprint: string = aptFingerprint(),
): Promise<PackageVersion[]> {
  const key = createHash('sha256').update([...packages].sort().join(' ')).digest('hex').slice(0, 16);
  const file = join(debianDir(), 'resolved', `${key}.json`);
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { fingerprint: string; packages: PackageVersion[] };
    if (kept.fingerprint === fingerprint) return kept.packages;
  } catch {
    // None kept yet, or unreadable: resolve again.
  }
  const resolved = await resolve(packages);
  mkdirSync(join(debianDir(), 'resolved'), { recursive: true });
  writeFileSync(file, JSON.stringify({ fingerprint, packages: resolved }));
  return resolved;
}

/** What `apt-get install` would add to this machine for `packages` (nothing when all are installed). */
async function missingPackages(packages: readonly string[]): Promise<PackageVersion[]> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('apt-get', ['install', '--simulate', '--no-install-recommends', '-qq', ...packages], {
      env: { ...process.env, LC_ALL: 'C' },
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? String(err);
    if (/Unable to locate package|has no installation candidate/.test(stderr)) {
      throw new DebianPackageError(`apt cannot find ${packages.join(', ')}: its package lists are missing or stale; run 'apt-get update' (as root) and try again`);
    }
    throw new DebianPackageError(`apt-get install --simulate ${packages.join(' ')} failed: ${stderr.trim()}`);
  }
  // "Inst buildah (1.28.2+ds1-3+deb12u1+b3 Debian:12.10/stable [amd64])"; an upgrade adds "[old]" after the name.
  const out: PackageVersion[] = [];
  for (const m of stdout.matchAll(/^Inst (\S+) (?:\[[^\]]*\] )?\((\S+) .*\[(\S+)\]\)$/gm)) {
    out.push({ name: m[1]!, version: m[2]!, arch: m[3]! });
  }
  return out;
}

function stampPath(p: PackageVersion): string {
  return join(debianDir(), 'stamps', `${p.name}_${p.version.replace(/[:/]/g, '%')}`);
}

/** apt-get download names files name_version_arch.deb with the epoch's ':' written as '%3a'. */
function debFileName(p: PackageVersion): string {
  return `${p.name}_${p.version.replace(/:/g, '%3a')}_${p.arch}.deb`;
}

function toolsAt(prefix: string): DebianTools {
  const binDirs = ['usr/local/sbin', 'usr/local/bin', 'usr/sbin', 'usr/bin', 'sbin', 'bin'].map((d) => join(prefix, d));
  const libDirs = ['usr/lib/x86_64-linux-gnu', 'lib/x86_64-linux-gnu', 'usr/lib'].map((d) => join(prefix, d)).filter((d) => existsSync(d));
  return {
    prefix,
    bin(name: string): string {
      for (const d of binDirs) {
        const p = join(d, name);
        if (existsSync(p)) return p;
      }
      return name;
    },
    env(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
      const path = [...binDirs.filter((d) => existsSync(d)), base.PATH ?? ''].join(delimiter);
      const ld = [...libDirs, base.LD_LIBRARY_PATH ?? ''].filter(Boolean).join(delimiter);
      return { ...base, PATH: path, LD_LIBRARY_PATH: ld };
    },
  };
}

async function run(cmd: string, args: string[], cwd: string): Promise<void> {
  mkdirSync(join(debianDir(), 'stamps'), { recursive: true });
  try {
    await execFileAsync(cmd, args, { cwd, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? String(err);
    throw new DebianPackageError(`${cmd} ${args.slice(0, 3).join(' ')}… failed: ${stderr.trim()}`);
  }
}

/**
 * The exact .deb files of `packages` at the archive's candidate versions, downloaded into `dir` whatever the
 * machine has installed: for building a root filesystem from packages (the image's base), where the host's own
 * installed set must not matter. Returns the files' paths.
 */
export async function downloadDebs(packages: readonly string[], dir: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  // One apt-cache run for all candidates and one for their architectures: each run loads apt's whole cache.
  const env = { ...process.env, LC_ALL: 'C' };
  const { stdout: policy } = await execFileAsync('apt-cache', ['policy', ...packages], { env, maxBuffer: 16 * 1024 * 1024 });
  const candidates = candidatesIn(policy);
  const named = packages.map((name) => {
    const candidate = candidates.get(name);
    if (!candidate || candidate === '(none)') throw new DebianPackageError(`apt has no candidate for ${name}: run 'apt-get update' (as root)`);
    return { name, version: candidate };
  });
  const { stdout: records } = await execFileAsync('apt-cache', ['show', ...named.map((p) => `${p.name}=${p.version}`)], { env, maxBuffer: 16 * 1024 * 1024 });
  const arches = architecturesIn(records);
  const versions: PackageVersion[] = named.map((p) => ({ ...p, arch: arches.get(`${p.name}=${p.version}`) ?? 'amd64' }));
  const have = new Set(readdirSync(dir));
  const todo = versions.filter((p) => !have.has(debFileName(p)));
  if (todo.length > 0) await run('apt-get', ['download', ...todo.map((p) => `${p.name}=${p.version}`)], dir);
  return versions.map((p) => join(dir, debFileName(p)));
}

/** Each package's candidate version in `apt-cache policy` output ("name:" lines, then "  Candidate: version"). */
export function candidatesIn(policy: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | undefined;
  for (const line of policy.split('\n')) {
    const header = /^(\S+):$/.exec(line);
    if (header) current = header[1];
    const candidate = /^\s+Candidate: (\S+)/.exec(line);
    if (candidate && current && !out.has(current)) out.set(current, candidate[1]!);
  }
  return out;
}

/** The architecture of each `name=version` record in `apt-cache show` output (records apart by blank lines). */
export function architecturesIn(records: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const record of records.split(/\n\s*\n/)) {
    const name = /^Package: (\S+)/m.exec(record)?.[1];
    const version = /^Version: (\S+)/m.exec(record)?.[1];
    const arch = /^Architecture: (\S+)/m.exec(record)?.[1];
    if (name && version && arch && !out.has(`${name}=${version}`)) out.set(`${name}=${version}`, arch);
  }
  return out;
}
