// Timed restores go into a freshly made, empty ext4 filesystem, as a real restore goes into a newly provisioned
// volume. Restoring into a directory of this machine's root filesystem instead measured what that filesystem did
// just before: it is ext4 without a journal, mounted with `discard`, and for minutes after a large deletion every
// file creation scans past "recently deleted" inodes (2-3x the CPU; see docs/datapath.md "How a restore runs").
//
// Each filesystem is a sparse image file under <scratch>/fresh-fs, formatted with mkfs.ext4 (lazy init, so it
// takes milliseconds), attached with `losetup --direct-io=on` (its pages are not cached a second time by the root
// filesystem) and mounted on a directory next to it. Closing unmounts, detaches and unlinks the image (one unlink).
// Leftovers of an interrupted run are found by path (mounts and loop devices backed by files under that dir only).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const KiB = 1024;
const MiB = 1024 * KiB;
const BLOCK = 4 * KiB;

/** mkfs.ext4 options besides the geometry: the defaults of /etc/mke2fs.conf (journal included) plus fast creation. */
export const MKFS_OPTIONS = ['-q', '-F', '-b', '4096', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1,nodiscard'];
/** No background zeroing of inode tables (ext4lazyinit) while a restore is being timed: the image is sparse anyway. */
export const MOUNT_OPTIONS = 'noinit_itable';
export const MINIMUM_IMAGE_BYTES = 64 * MiB;

/** How the restore target is made, for the report and the results JSON. */
export function freshFilesystemDescription(): string {
  return (
    `Restores go into the root of a fresh, empty ext4 filesystem each time (a new volume, as in a real restore): ` +
    `a sparse image under <data-dir>/fresh-fs, \`mkfs.ext4 ${MKFS_OPTIONS.join(' ')} -N <inodes>\` (journal on, ` +
    `mke2fs.conf defaults otherwise), \`losetup --direct-io=on\`, \`mount -o ${MOUNT_OPTIONS}\`, lost+found removed; ` +
    'made before and unmounted, detached and deleted after the timed restore and its verification (not timed).'
  );
}

export interface RestoreContent {
  /** Bytes of the files to be restored. */
  bytes: number;
  files: number;
  /** Directories; estimated from the file count when unknown. */
  dirs?: number;
}

export interface FilesystemGeometry {
  imageBytes: number;
  inodes: number;
}

/**
 * Image size and inode count for a tree: every file may waste up to a block, every inode costs 256 bytes of inode
 * table and ~64 bytes of directory entry, plus 25 % and 256 MiB (journal, bitmaps, temp files while restoring).
 * The image is sparse, so generous sizes cost nothing until written.
 */
export function filesystemGeometry(content: RestoreContent): FilesystemGeometry {
  const dirs = content.dirs ?? Math.ceil(content.files / 8) + 64;
  const inodes = Math.ceil((content.files + dirs) * 1.1) + 4096;
  const needed = content.bytes + content.files * BLOCK + dirs * BLOCK + inodes * (256 + 64);
  const imageBytes = Math.max(MINIMUM_IMAGE_BYTES, Math.ceil((needed * 1.25 + 256 * MiB) / MiB) * MiB);
  return { imageBytes, inodes };
}

/** /proc/mounts escapes space, tab, newline and backslash as octal (\040 ...). */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

function isUnder(path: string, dir: string): boolean {
  const base = resolve(dir);
  return path.startsWith(`${base}/`);
}

/** Mount points in a /proc/mounts text that lie below dir, deepest first (the order to unmount them in). */
export function mountPointsUnder(procMounts: string, dir: string): string[] {
  const points = procMounts
    .split('\n')
    .map((line) => line.split(' ')[1])
    .filter((field): field is string => field !== undefined && field.length > 0)
    .map(unescapeMountField)
    .filter((point) => isUnder(point, dir));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

interface LosetupListing {
  loopdevices?: { name?: string; 'back-file'?: string | null }[];
}

/**
 * Loop devices in `losetup --list --json` output whose backing file lies below dir. A backing file that was deleted
 * while attached is listed with " (deleted)" after its path; it still counts.
 */
export function loopDevicesUnder(losetupJson: string, dir: string): string[] {
  if (losetupJson.trim() === '') return [];
  const listing = JSON.parse(losetupJson) as LosetupListing;
  return (listing.loopdevices ?? [])
    .filter((device) => {
      const backFile = (device['back-file'] ?? '').replace(/ \(deleted\)$/, '');
      return device.name !== undefined && isUnder(backFile, dir);
    })
    .map((device) => device.name!);
}

export class FreshFilesystemError extends Error {
  override name = 'FreshFilesystemError';
}

function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    const detail = (stderr ?? '').trim().split('\n').slice(-2).join(' | ') || message;
    throw new FreshFilesystemError(`${command} ${args.join(' ')}: ${detail}`);
  }
}

function waitMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Unmounts, retrying for a few seconds while the mount is busy; detaches it lazily as a last resort. */
function unmount(mountPoint: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      run('umount', [mountPoint]);
      return;
    } catch (error) {
      if (attempt >= 20) {
        run('umount', ['--lazy', mountPoint]);
        throw new FreshFilesystemError(`${(error as Error).message} (detached lazily instead)`);
      }
      waitMs(250);
    }
  }
}

function isMounted(mountPoint: string): boolean {
  return mountPointsUnder(readFileSync('/proc/mounts', 'utf8'), resolve(mountPoint, '..')).includes(resolve(mountPoint));
}

/** Detaches a loop device only while it is still backed by image (a leftover cleanup may have freed it for others). */
function detachIfBackedBy(device: string, image: string): void {
  const listing = run('losetup', ['--list', '--json', '--output', 'NAME,BACK-FILE']);
  if (backingFile(listing, device) === image) run('losetup', ['--detach', device]);
}

function backingFile(losetupJson: string, device: string): string | undefined {
  if (losetupJson.trim() === '') return undefined;
  const listing = JSON.parse(losetupJson) as LosetupListing;
  const backFile = listing.loopdevices?.find((d) => d.name === device)?.['back-file'];
  return backFile?.replace(/ \(deleted\)$/, '');
}

/** Where the images and mount points live below the bench's scratch dir. */
export function freshFilesystemsDir(scratchDir: string): string {
  return join(scratchDir, 'fresh-fs');
}

/** Why fresh filesystems cannot be made here, or undefined when the tools and the privilege are there. */
export function freshFilesystemsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not running as root (mount and losetup need it)';
  if (!existsSync('/dev/loop-control')) return 'no /dev/loop-control (no loop devices)';
  for (const command of ['mkfs.ext4', 'losetup', 'mount', 'umount']) {
    try {
      execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    } catch {
      return `${command} not found`;
    }
  }
  return undefined;
}

/**
 * Unmounts, detaches and deletes whatever an interrupted earlier run left under <scratch>/fresh-fs. Touches only
 * mounts and loop devices whose paths lie below that directory. Returns what it cleaned, one line each.
 */
export function cleanLeftoverFilesystems(scratchDir: string): string[] {
  const dir = freshFilesystemsDir(scratchDir);
  if (!existsSync(dir)) return [];
  const cleaned: string[] = [];
  for (const mountPoint of mountPointsUnder(readFileSync('/proc/mounts', 'utf8'), dir)) {
    unmount(mountPoint);
    cleaned.push(`unmounted ${mountPoint}`);
  }
  for (const device of loopDevicesUnder(run('losetup', ['--list', '--json', '--output', 'NAME,BACK-FILE']), dir)) {
    run('losetup', ['--detach', device]);
    cleaned.push(`detached ${device}`);
  }
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
  rmdirSync(dir);
  return cleaned;
}

export interface FreshFilesystem {
  /** The mounted filesystem's root: empty, the place to restore into. */
  readonly dir: string;
  readonly device: string;
  readonly image: string;
  readonly geometry: FilesystemGeometry;
  /** Unmounts, detaches the loop device and deletes the image. Safe to call twice. */
  close(): void;
}

export interface OpenFreshFilesystemOptions {
  scratchDir: string;
  content: RestoreContent;
}

const open = new Set<FreshFilesystem>();
let counter = 0;

// A run that ends by an exception or process.exit still tears its filesystems down (a kill -9 leaves them to the
// next run's cleanLeftoverFilesystems).
process.on('exit', () => {
  for (const fs of open) {
    try {
      fs.close();
    } catch {
      // Nothing more to do on the way out; the next run cleans up.
    }
  }
});

/** Makes, attaches and mounts a fresh ext4 filesystem sized for content. Undoes what it did when a step fails. */
export function openFreshFilesystem(options: OpenFreshFilesystemOptions): FreshFilesystem {
  const dir = freshFilesystemsDir(options.scratchDir);
  mkdirSync(dir, { recursive: true });
  const name = `${process.pid}-${counter++}`;
  const image = join(dir, `${name}.img`);
  const mountPoint = join(dir, `${name}.mnt`);
  const geometry = filesystemGeometry(options.content);
  let device: string | undefined;
  let mounted = false;
  let closed = false;
  const teardown = (): void => {
    const problems: string[] = [];
    const attempt = (step: () => void): void => {
      try {
        step();
      } catch (error) {
        problems.push((error as Error).message);
      }
    };
    if (mounted) attempt(() => (isMounted(mountPoint) ? unmount(mountPoint) : undefined));
    if (device) attempt(() => detachIfBackedBy(device!, image));
    attempt(() => rmSync(mountPoint, { recursive: true, force: true }));
    attempt(() => rmSync(image, { force: true }));
    if (problems.length > 0) throw new FreshFilesystemError(`cleaning up ${name}: ${problems.join('; ')}`);
  };
  try {
    writeFileSync(image, '');
    truncateSync(image, geometry.imageBytes);
    run('mkfs.ext4', [...MKFS_OPTIONS, '-N', String(geometry.inodes), image]);
    device = run('losetup', ['--direct-io=on', '--find', '--show', image]).trim();
    mkdirSync(mountPoint);
    run('mount', ['-t', 'ext4', '-o', MOUNT_OPTIONS, device, mountPoint]);
    mounted = true;
    rmdirSync(join(mountPoint, 'lost+found'));
  } catch (error) {
    try {
      teardown();
    } catch (cleanupError) {
      throw new FreshFilesystemError(`${(error as Error).message}; ${(cleanupError as Error).message}`);
    }
    throw error instanceof FreshFilesystemError ? error : new FreshFilesystemError((error as Error).message);
  }
  const fs: FreshFilesystem = {
    dir: mountPoint,
    device,
    image,
    geometry,
    close() {
      if (closed) return;
      closed = true;
      open.delete(fs);
      teardown();
      // The image is gone; remove the directory too once nothing else is in it.
      try {
        if (readdirSync(dir).length === 0) rmdirSync(dir);
      } catch {
        // Another filesystem of this run still lives there.
      }
    },
  };
  open.add(fs);
  return fs;
}

/** Runs fn with a fresh filesystem and always closes it afterwards. */
export async function withFreshFilesystem<T>(options: OpenFreshFilesystemOptions, fn: (fs: FreshFilesystem) => Promise<T>): Promise<T> {
  const fs = openFreshFilesystem(options);
  try {
    return await fn(fs);
  } finally {
    fs.close();
  }
}

/** Checks once that a small filesystem can be made, mounted and removed here; the reason when not. */
export function probeFreshFilesystems(scratchDir: string): { available: true } | { available: false; reason: string } {
  const missing = freshFilesystemsUnavailable();
  if (missing) return { available: false, reason: missing };
  try {
    openFreshFilesystem({ scratchDir, content: { bytes: 0, files: 0, dirs: 0 } }).close();
    return { available: true };
  } catch (error) {
    return { available: false, reason: (error as Error).message };
  }
}
