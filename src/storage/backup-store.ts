/**
 * Reads and writes backups and restores in a storage location with Velero's names and encodings. Write order
 * follows Velero (log → velero-backup.json → tarball → the rest) and a failed tarball upload removes the metadata,
 * so a backup is never visible in storage without its contents.
 */
import type { Readable } from 'node:stream';
import { parseBackup, parsePodVolumeBackup, type Backup, type PodVolumeBackup } from '../api/index.js';
import { isNotFound, type ObjectStore } from '../plugins/object-store/index.js';
import {
  TopLevelDirs,
  backupDir,
  backupFileKey,
  backupsPrefix,
  downloadKey,
  restoreDir,
  restoreFileKey,
  type BackupFileKind,
  type DownloadTargetKind,
  type RestoreFileKind,
} from './layout.js';
import { fromJsonGzip, gunzipText, gzipText, toJsonGzip, toPrettyJson } from './encoding.js';

/** The JSON files of a backup directory, by kind; each is written gzip-compressed even when empty. */
export type BackupJsonFiles = Partial<Record<Exclude<BackupFileKind, 'metadata' | 'contents' | 'log'>, unknown>>;

export interface PutBackupInput {
  name: string;
  metadata: Backup;
  contents: Buffer | Readable;
  contentsLength?: number;
  log: string;
  files: BackupJsonFiles;
}

export interface RestoreFiles {
  log?: string;
  results?: unknown;
  resourceList?: unknown;
  itemOperations?: unknown;
  volumeInfo?: unknown;
}

export class BackupStore {
  constructor(readonly objects: ObjectStore) {}

  get description(): string {
    return this.objects.description;
  }

  /** Names of backup directories present in the location (a directory without metadata is not a backup). */
  async listBackupDirs(): Promise<string[]> {
    const prefixes = await this.objects.listCommonPrefixes(backupsPrefix, '/');
    return prefixes.map((p) => p.slice(backupsPrefix.length).replace(/\/$/, '')).filter(Boolean).sort();
  }

  async backupExists(name: string): Promise<boolean> {
    return (await this.objects.head(backupFileKey(name, 'metadata'))) !== undefined;
  }

  async getBackupMetadata(name: string): Promise<Backup | undefined> {
    const data = await this.tryGet(backupFileKey(name, 'metadata'));
    return data ? parseBackup(JSON.parse(data.toString('utf8'))) : undefined;
  }

  async putBackup(input: PutBackupInput): Promise<void> {
    const { name } = input;
    await this.objects.put(backupFileKey(name, 'log'), gzipText(input.log));
    await this.objects.put(backupFileKey(name, 'metadata'), toPrettyJson(input.metadata));
    try {
      await this.objects.put(backupFileKey(name, 'contents'), input.contents, input.contentsLength !== undefined ? { contentLength: input.contentsLength } : {});
    } catch (err) {
      await this.objects.delete(backupFileKey(name, 'metadata')).catch(() => undefined);
      throw err;
    }
    for (const [kind, value] of Object.entries(input.files)) {
      await this.objects.put(backupFileKey(name, kind as BackupFileKind), toJsonGzip(value));
    }
  }

  /** Replaces velero-backup.json (the finalizer re-puts it with the final phase). */
  async putBackupMetadata(name: string, backup: Backup): Promise<void> {
    await this.objects.put(backupFileKey(name, 'metadata'), toPrettyJson(backup));
  }

  async putBackupJson(name: string, kind: keyof BackupJsonFiles, value: unknown): Promise<void> {
    await this.objects.put(backupFileKey(name, kind), toJsonGzip(value));
  }

  /** A JSON file of a backup, or undefined when it is missing (older backups lack some). */
  async getBackupJson(name: string, kind: keyof BackupJsonFiles): Promise<unknown> {
    const data = await this.tryGet(backupFileKey(name, kind));
    return data ? fromJsonGzip(data) : undefined;
  }

  /**
   * The PodVolumeBackups stored with a backup (`<name>-podvolumebackups.json.gz`), as Velero or cairn wrote them;
   * [] when the file is missing or empty. Entries that are not readable PodVolumeBackups are left out.
   */
  async getPodVolumeBackups(name: string): Promise<PodVolumeBackup[]> {
    const stored = await this.getBackupJson(name, 'podVolumeBackups');
    if (!Array.isArray(stored)) return [];
    const out: PodVolumeBackup[] = [];
    for (const item of stored as unknown[]) {
      try {
        out.push(parsePodVolumeBackup({ apiVersion: 'velero.io/v1', kind: 'PodVolumeBackup', ...(item as object) }));
      } catch {
        /* not a PodVolumeBackup: skipped */
      }
    }
    return out;
  }

  /** The backup's log text (`<name>-logs.gz`), or undefined when there is none. */
  async getBackupLog(name: string): Promise<string | undefined> {
    const data = await this.tryGet(backupFileKey(name, 'log'));
    return data ? gunzipText(data) : undefined;
  }

  /** Replaces the backup's log (the operations controller appends what happened after the items were stored). */
  async putBackupLog(name: string, text: string): Promise<void> {
    await this.objects.put(backupFileKey(name, 'log'), gzipText(text));
  }

  /** Replaces the backup's tarball (the finalizer re-puts it with the items its operations changed). */
  async putBackupContents(name: string, contents: Readable, contentLength: number): Promise<void> {
    await this.objects.put(backupFileKey(name, 'contents'), contents, { contentLength });
  }

  async getBackupContents(name: string): Promise<Readable> {
    return this.objects.getStream(backupFileKey(name, 'contents'));
  }

  async getBackupFile(name: string, kind: BackupFileKind): Promise<Buffer | undefined> {
    return this.tryGet(backupFileKey(name, kind));
  }

  async deleteBackup(name: string): Promise<number> {
    return this.deletePrefix(backupDir(name));
  }

  async putRestoreFiles(name: string, files: RestoreFiles): Promise<void> {
    if (files.log !== undefined) await this.objects.put(restoreFileKey(name, 'log'), gzipText(files.log));
    for (const kind of ['results', 'resourceList', 'itemOperations', 'volumeInfo'] as const) {
      if (files[kind] !== undefined) await this.objects.put(restoreFileKey(name, kind), toJsonGzip(files[kind]));
    }
  }

  async getRestoreJson(name: string, kind: Exclude<RestoreFileKind, 'log'>): Promise<unknown> {
    const data = await this.tryGet(restoreFileKey(name, kind));
    return data ? fromJsonGzip(data) : undefined;
  }

  async deleteRestore(name: string): Promise<number> {
    return this.deletePrefix(restoreDir(name));
  }

  /** The raw (still compressed) object a DownloadRequest of this kind asks for, or undefined. */
  async getDownload(kind: DownloadTargetKind, name: string): Promise<Buffer | undefined> {
    return this.tryGet(downloadKey(kind, name));
  }

  async signedDownloadUrl(kind: DownloadTargetKind, name: string, expiresSeconds = 600): Promise<string | undefined> {
    return this.objects.signedUrl?.(downloadKey(kind, name), { method: 'GET', expiresSeconds });
  }

  /**
   * Problems with the location's layout: anything at the top level that Velero would not put there makes the
   * location Unavailable (docs/storage-locations.md). Also proves the location can be listed.
   */
  async layoutProblems(): Promise<string[]> {
    const top = await this.objects.listCommonPrefixes('', '/');
    const allowed = new Set<string>(TopLevelDirs);
    return top
      .map((p) => p.replace(/\/$/, ''))
      .filter((d) => d && !allowed.has(d))
      .map((d) => `unexpected directory "${d}/" at the top level of the location`);
  }

  private async deletePrefix(prefix: string): Promise<number> {
    let n = 0;
    for await (const obj of this.objects.list(prefix)) {
      await this.objects.delete(obj.key);
      n++;
    }
    return n;
  }

  private async tryGet(key: string): Promise<Buffer | undefined> {
    try {
      return await this.objects.get(key);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
