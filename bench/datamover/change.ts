// The change between the first and the incremental backup: 1 MiB of new random bytes in the middle of the first
// large file (same size) and a line appended to every 20th small file, as a volume changes between two nightly
// backups. Derived from the base files alone, deterministic, and nothing here touches the disk.
import type { GeneratedFile } from '../datapath/datasets.js';
import { KeyStream } from '../datapath/prng.js';

const MiB = 1024 * 1024;
export const CHANGED_WINDOW = MiB;
export const SMALL_FILE_STRIDE = 20;
const MARK = Buffer.from('\n# changed before the incremental backup\n');

export interface IncrementalChange {
  files: GeneratedFile[];
  /** Files rewritten, and their bytes after the change. */
  changedFiles: number;
  changedBytes: number;
  /** Bytes the volume grows by (the appended lines). */
  addedBytes: number;
}

function collect(chunks: Iterable<Buffer>): Buffer {
  return Buffer.concat([...chunks]);
}

/** The first large file with `CHANGED_WINDOW` new bytes at its middle (the whole file if it is smaller). */
function changedLargeFile(file: GeneratedFile): GeneratedFile {
  const bytes = collect(file.chunks());
  const window = Math.min(CHANGED_WINDOW, bytes.length);
  const at = Math.floor((bytes.length - window) / 2);
  new KeyStream(`datamover/change/${file.relPath}`).take(window).copy(bytes, at);
  return { relPath: file.relPath, size: bytes.length, chunks: () => [bytes] };
}

function changedSmallFile(file: GeneratedFile): GeneratedFile {
  const bytes = Buffer.concat([collect(file.chunks()), MARK]);
  return { relPath: file.relPath, size: bytes.length, chunks: () => [bytes] };
}

export function incrementalChange(baseFiles: Iterable<GeneratedFile>): IncrementalChange {
  const files: GeneratedFile[] = [];
  let large = 0;
  let small = 0;
  for (const f of baseFiles) {
    if (f.relPath.startsWith('large/')) {
      if (large++ === 0) files.push(changedLargeFile(f));
    } else if (small++ % SMALL_FILE_STRIDE === 0) {
      files.push(changedSmallFile(f));
    }
  }
  const changedBytes = files.reduce((n, f) => n + f.size, 0);
  const smallChanged = files.filter((f) => !f.relPath.startsWith('large/')).length;
  return { files, changedFiles: files.length, changedBytes, addedBytes: smallChanged * MARK.length };
}
