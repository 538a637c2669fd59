/**
 * Reserves a restored file's blocks before its content is written (Linux `fallocate`), as restic does for every file
 * it restores.
 *
 * Why: ext4 allocates the blocks of buffered writes late (delayed allocation) and counts them as dirty until they
 * are written back. Once that count passes half of the filesystem's free space, every further write first starts a
 * writeback of the whole filesystem and waits for it (`ext4_nonda_switch`). A restore into a volume sized to its
 * data writes faster than the kernel writes back (nothing is written back before dirty data reaches a tenth of
 * memory), so it meets that threshold and its writers stall for a second or more near the end. Blocks reserved up
 * front are allocated already: writing them adds nothing to that count.
 *
 * Node has no `fallocate`; it is called through koffi (a maintained FFI library with prebuilt binaries). Where it
 * cannot be loaded (not Linux with glibc) or the filesystem refuses (`EOPNOTSUPP` on some), nothing is reserved and
 * the restore writes as before: the reservation is an optimisation, never a condition of a correct restore.
 */
import { createRequire } from 'node:module';

type Fallocate = (fd: number, mode: number, offset: number, length: number) => number;

let fallocate: Fallocate | null | undefined;

function load(): Fallocate | null {
  if (process.platform !== 'linux') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    return koffi.load('libc.so.6').func('fallocate', 'int', ['int', 'int', 'int64_t', 'int64_t']) as Fallocate;
  } catch {
    return null;
  }
}

/**
 * Reserves the first `size` bytes of the file open at `fd` (mode 0: a shorter file grows to `size`) and answers how
 * many bytes were reserved: 0 when nothing was (no `fallocate` here, or the filesystem refused). A caller that
 * writes less than it reserved truncates the file to what it wrote.
 */
export function preallocate(fd: number, size: number): number {
  if (size <= 0) return 0;
  if (fallocate === undefined) fallocate = load();
  return fallocate !== null && fallocate(fd, 0, 0, size) === 0 ? size : 0;
}
