// Scratch trees (restores, repositories) are moved aside at once and deleted after the measurements: on this
// machine's root filesystem (ext4 mounted with `discard`) every unlink of a non-empty file waits for a discard,
// so deleting a restored million-file tree takes minutes and would otherwise stall the run between tools.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

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
  empty(): void {
    // rm(1), not fs.rmSync: Node 24's recursive rmSync gave up with ENOTEMPTY on a restored 20,000-file tree here.
    const result = spawnSync('rm', ['-rf', '--', this.dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (result.status !== 0) throw new Error(`could not delete ${this.dir}: ${result.stderr.toString().trim()}`);
  }

  get pending(): boolean {
    return existsSync(this.dir);
  }
}
