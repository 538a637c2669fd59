/**
 * BLAKE3 from the native module of @napi-rs/blake-hash (5.5 GB/s on the test machine; docs/benchmarks.md). We load the
 * platform package directly: the wrapper package lists optional builds for platforms that were never published,
 * which breaks `npm ci` from a lockfile. cairn's data path runs on linux-x64 (glibc) nodes.
 */
import { createRequire } from 'node:module';

export interface Blake3Hasher {
  update(input: Buffer | Uint8Array): this;
  digestBuffer(): Buffer;
  /** Back to the initial state, keeping the key of a keyed hasher. */
  reset(): void;
}

export interface Blake3HasherClass {
  new (): Blake3Hasher;
  newKeyed(key: Buffer): Blake3Hasher;
}

export const BLAKE3_NATIVE_PACKAGE = '@napi-rs/blake-hash-linux-x64-gnu';

const require = createRequire(import.meta.url);

/** Path of the native module, for worker threads that load it themselves. */
export function blake3ModulePath(): string {
  try {
    return require.resolve(BLAKE3_NATIVE_PACKAGE);
  } catch {
    throw new Error(`cairn's data path needs ${BLAKE3_NATIVE_PACKAGE} (linux x64, glibc); it is not installed on ${process.platform}-${process.arch}`);
  }
}

export const Blake3Hasher: Blake3HasherClass = (require(blake3ModulePath()) as { Blake3Hasher: Blake3HasherClass }).Blake3Hasher;
