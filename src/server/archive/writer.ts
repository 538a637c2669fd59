/**
 * Writes a backup tarball as Velero does (docs/backup.md): a gzip'd tar of regular files (mode 0755,
 * no directory entries), `metadata/version` first, then every item twice — the plain path and the
 * `<version>-preferredversion/` copy. The archive goes to a temporary file, not memory, so a backup of a huge
 * cluster needs disk, not RAM; the caller uploads the file and removes it.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';
import { FORMAT_VERSION, FORMAT_VERSION_PATH, itemPath } from './paths.js';

export const ARCHIVE_FILE_MODE = 0o755;

export interface ArchiveItem {
  /** `resource.group` as in the archive, e.g. `deployments.apps`. */
  groupResource: string;
  namespace?: string;
  name: string;
  /** The API version the item was read in (the group's preferred version), e.g. `v1`. */
  version: string;
  object: unknown;
}

export interface FinishedArchive {
  /** The gzip'd tarball on disk. */
  path: string;
  size: number;
  /** Number of items (each written twice). */
  items: number;
}

export class BackupArchiveWriter {
  private readonly pack: Pack;
  private readonly done: Promise<void>;
  private items = 0;
  private failure: Error | undefined;

  private constructor(readonly dir: string, readonly path: string, private readonly now: () => Date) {
    this.pack = tarPack();
    this.done = pipeline(this.pack, createGzip(), createWriteStream(path));
    this.done.catch((err: unknown) => {
      this.failure = err as Error;
    });
  }

  /** Opens a new archive in a fresh temporary directory and writes `metadata/version`. */
  static async create(opts: { tmpDir?: string; now?: () => Date } = {}): Promise<BackupArchiveWriter> {
    const dir = await mkdtemp(join(opts.tmpDir ?? tmpdir(), 'cairn-backup-'));
    const writer = new BackupArchiveWriter(dir, join(dir, 'backup.tar.gz'), opts.now ?? (() => new Date()));
    await writer.addFile(FORMAT_VERSION_PATH, Buffer.from(`${FORMAT_VERSION}\n`));
    return writer;
  }

  get itemCount(): number {
    return this.items;
  }

  /** Adds an item under its plain path and its preferred-version copy (compact JSON, as Velero writes it). */
  async addItem(item: ArchiveItem): Promise<void> {
    const body = Buffer.from(JSON.stringify(item.object));
    const base = { groupResource: item.groupResource, name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) };
    await this.addFile(itemPath(base), body);
    await this.addFile(itemPath({ ...base, preferredVersion: item.version }), body);
    this.items++;
  }

  /** Ends the archive and waits until every byte is on disk. */
  async finish(): Promise<FinishedArchive> {
    this.pack.finalize();
    await this.done;
    const { size } = await stat(this.path);
    return { path: this.path, size, items: this.items };
  }

  /** Stops writing and removes the temporary directory (after finish() too: the upload is done by then). */
  async dispose(): Promise<void> {
    if (!this.pack.destroyed) this.pack.destroy();
    await this.done.catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private addFile(name: string, body: Buffer): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pack.entry({ name, size: body.byteLength, mode: ARCHIVE_FILE_MODE, type: 'file', mtime: this.now() }, body, (err) =>
        err ? reject(err) : resolve(),
      );
    });
  }
}
