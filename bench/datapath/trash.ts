// Scratch trees (restores, repositories) are moved aside at once and deleted after the measurements: on this
// machine's root filesystem (ext4 mounted with `discard`) every unlink of a non-empty file waits for a discard,
// so deleting a restored million-file tree one file at a time takes many minutes. Deleting the leaf directories
// with several rm(1) processes at once lets the discards overlap (about 10x faster here).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

const PARALLEL_DELETES = 8;

/** Directories below root that have no subdirectories (root itself when it has none). */
export function leafDirectories(root: string): string[] {
  const leaves: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let subdirs: string[];
    try {
      subdirs = readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => join(dir, entry.name));
    } catch {
      continue;
    }
    if (subdirs.length === 0) leaves.push(dir);
    else stack.push(...subdirs);
  }
  return leaves;
}

function removeTree(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('rm', ['-rf', '--', path], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`rm -rf ${path}: ${stderr.trim()}`))));
  });
}

export class Trash {
  private counter = 0;

  constructor(private readonly dir: string) {}

  /** Moves a path out of the way (a rename on the same filesystem); nothing happens when it does not exist. */
  discard(path: string): void {
    if (!existsSync(path)) return;
    mkdirSync(this.dir, { recursive: true });
    renameSync(path, join(this.dir, `${process.pid}-${Date.now()}-${this.counter++}`));
  }

  /** Deletes everything discarded so far (and anything an interrupted run left). */
  async empty(): Promise<void> {
    if (!existsSync(this.dir)) return;
    const leaves = leafDirectories(this.dir);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < leaves.length) await removeTree(leaves[next++]!);
    };
    await Promise.all(Array.from({ length: PARALLEL_DELETES }, worker));
    await removeTree(this.dir);
  }

  get pending(): boolean {
    return existsSync(this.dir);
  }
}
