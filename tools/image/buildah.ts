/**
 * buildah, the daemonless OCI image builder from Debian's packages, with the project's own storage under
 * ~/.cache/cairn/containers: nothing of the machine's (no /var/lib/containers, no /etc/containers) is used or
 * changed, so images built here stay out of the way of any other container tool on the machine.
 *
 * Why buildah and not podman: building is all `npm run image` needs, and buildah builds a Containerfile without
 * a runtime or network stack (`--isolation chroot`), from one Debian package and a few libraries; podman would
 * bring conmon, a network stack and a runtime for what is only a build.
 */
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot } from '../local-cluster/paths.js';
import { DebianPackageError, debianTools, type DebianTools } from '../local-cluster/debian.js';

const execFileAsync = promisify(execFile);

export interface Buildah {
  /** Runs `buildah <args>` with the project's storage; resolves with stdout, rejects with stderr's tail. */
  run(args: string[], opts?: { inherit?: boolean; cwd?: string }): Promise<string>;
  /** True when the local image store has `ref`. */
  hasImage(ref: string): Promise<boolean>;
}

/** A builder this script cannot provide: names the Debian package a user would install. */
export class BuilderMissingError extends Error {}

/** The subcommands that pull, push or commit images, and so consult the signature policy. */
const POLICY_COMMANDS = new Set(['build', 'bud', 'from', 'commit', 'push', 'pull']);

export function containersDir(): string {
  return join(cacheRoot(), 'containers');
}

/**
 * buildah as unpacked from Debian may need libraries that live only in the private prefix. LD_LIBRARY_PATH is not
 * enough: `--isolation chroot` re-executes buildah with a clean environment. A copy whose RPATH names the prefix's
 * library folders finds them however it is started. A buildah installed on the machine is used as it is.
 */
async function withLibraryPath(tools: DebianTools, dir: string): Promise<string> {
  const unpacked = tools.bin('buildah');
  if (!unpacked.startsWith(tools.prefix)) return unpacked;
  const patched = join(dir, 'bin', 'buildah');
  if (existsSync(patched) && statSync(patched).mtimeMs >= statSync(unpacked).mtimeMs) return patched;
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const tmp = `${patched}.${process.pid}`;
  copyFileSync(unpacked, tmp);
  const rpath = ['usr/lib/x86_64-linux-gnu', 'lib/x86_64-linux-gnu'].map((d) => join(tools.prefix, d)).join(':');
  await execFileAsync(tools.bin('patchelf'), ['--set-rpath', rpath, tmp], { env: tools.env() });
  renameSync(tmp, patched);
  return patched;
}

export async function openBuildah(log: (line: string) => void): Promise<Buildah> {
  let tools: DebianTools;
  try {
    tools = await debianTools(['buildah', 'patchelf'], log);
  } catch (err) {
    if (err instanceof DebianPackageError) {
      throw new BuilderMissingError(`npm run image needs buildah: install Debian's package 'buildah' (apt-get install buildah) — ${err.message}`);
    }
    throw err;
  }
  const dir = containersDir();
  mkdirSync(dir, { recursive: true });
  // Where images come from by short name, and that any image may be used: the project's own settings, so the
  // machine's /etc/containers (if any) is neither needed nor consulted.
  const registriesConf = join(dir, 'registries.conf');
  writeFileSync(registriesConf, 'unqualified-search-registries = ["docker.io"]\nshort-name-mode = "permissive"\n');
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, `${JSON.stringify({ default: [{ type: 'insecureAcceptAnything' }] })}\n`);
  const storageConf = join(dir, 'storage.conf');
  writeFileSync(storageConf, `[storage]\ndriver = "overlay"\nrunroot = "${join(dir, 'run')}"\ngraphroot = "${join(dir, 'storage')}"\n`);
  const env = tools.env({
    ...process.env,
    CONTAINERS_REGISTRIES_CONF: registriesConf,
    CONTAINERS_STORAGE_CONF: storageConf,
    CONTAINERS_POLICY_JSON: policy,
    BUILDAH_ISOLATION: 'chroot',
  });
  const buildah = await withLibraryPath(tools, dir);
  // buildah 1.28 reads the signature policy only from /etc/containers or this flag, not from the environment.
  const withPolicy = (args: string[]): string[] =>
    POLICY_COMMANDS.has(args[0] ?? '') ? [args[0]!, `--signature-policy=${policy}`, ...args.slice(1)] : args;
  const run = (args: string[], opts: { inherit?: boolean; cwd?: string } = {}): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn(buildah, withPolicy(args), { env, cwd: opts.cwd, stdio: ['ignore', opts.inherit ? 'inherit' : 'pipe', opts.inherit ? 'inherit' : 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
      child.on('error', (err) => {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') reject(new BuilderMissingError("npm run image needs buildah: install Debian's package 'buildah' (apt-get install buildah)"));
        else reject(err);
      });
      child.on('exit', (code, signal) => {
        if (code === 0) resolve(stdout);
        else reject(new Error(`buildah ${args[0]} failed (${signal ?? `exit ${code}`})${stderr ? `: ${stderr.trim()}` : ''}`));
      });
    });
  return {
    run,
    async hasImage(ref: string): Promise<boolean> {
      try {
        await run(['inspect', '--type', 'image', '--format', '{{.FromImageID}}', ref]);
        return true;
      } catch {
        return false;
      }
    },
  };
}
