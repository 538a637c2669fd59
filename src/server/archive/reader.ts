/**
 * Reads a backup tarball (`<backup>.tar.gz`, docs/backup.md) from a stream: gunzip → tar entries →
 * items keyed by their path (parsed with ./paths.ts, the same functions the writer uses). The restore reads the
 * unversioned copy of each item; the `<version>-preferredversion/` copies are expected and passed over, anything
 * else unexpected becomes a warning, never a failure.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { FORMAT_VERSION_PATH, parseItemPath } from './paths.js';

export interface ArchiveItem {
  /** `resource.group` as in the archive path. */
  groupResource: string;
  namespace?: string;
  name: string;
  object: UnstructuredObject;
}

export interface BackupArchive {
  /** Content of `metadata/version` (e.g. `1.1.0`), undefined when missing. */
  formatVersion?: string;
  items: ArchiveItem[];
  /** Files the reader skipped, with the reason. */
  warnings: string[];
}

export interface ReadArchiveOptions {
  /** Refuse single entries bigger than this (a corrupt or hostile archive must not exhaust memory). */
  maxEntryBytes?: number;
  /** Keep only the items of these group-resources (the rest is read past, never parsed or held). */
  onlyGroupResources?: readonly string[];
}

const DEFAULT_MAX_ENTRY_BYTES = 64 * 1024 * 1024;

export async function readBackupArchive(input: Readable, opts: ReadArchiveOptions = {}): Promise<BackupArchive> {
  const maxEntryBytes = opts.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  const result: BackupArchive = { items: [], warnings: [] };
  const tar = extract();
  const consume = (async () => {
    for await (const entry of tar) {
      const { name, type, size } = entry.header;
      if (type !== 'file') {
        if (type !== 'directory') result.warnings.push(`ignored ${type ?? 'unknown'} entry ${name} in the backup archive`);
        entry.resume();
        continue;
      }
      if ((size ?? 0) > maxEntryBytes) {
        result.warnings.push(`ignored ${name}: ${size} bytes is more than the ${maxEntryBytes} bytes an item may have`);
        entry.resume();
        continue;
      }
      const path = stripDotSlash(name);
      if (opts.onlyGroupResources && !opts.onlyGroupResources.includes(parseItemPath(path)?.groupResource ?? '')) {
        entry.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      addEntry(result, path, Buffer.concat(chunks));
    }
  })();
  await Promise.all([pipeline(input, createGunzip(), tar), consume]);
  return result;
}

function stripDotSlash(name: string): string {
  return name.replace(/^\.\//, '').replace(/^\/+/, '');
}

function addEntry(result: BackupArchive, path: string, data: Buffer): void {
  if (path === FORMAT_VERSION_PATH) {
    result.formatVersion = data.toString('utf8').trim();
    return;
  }
  const parsed = parseItemPath(path);
  if (!parsed) {
    result.warnings.push(`ignored unexpected file ${path} in the backup archive`);
    return;
  }
  if (parsed.preferredVersion) return;
  let object: unknown;
  try {
    object = JSON.parse(data.toString('utf8'));
  } catch {
    result.warnings.push(`ignored ${path}: not valid JSON`);
    return;
  }
  if (!isObject(object)) {
    result.warnings.push(`ignored ${path}: not a Kubernetes object (apiVersion, kind and metadata.name are needed)`);
    return;
  }
  result.items.push({
    groupResource: parsed.groupResource,
    ...(parsed.namespace !== undefined ? { namespace: parsed.namespace } : {}),
    name: parsed.name,
    object,
  });
}

function isObject(v: unknown): v is UnstructuredObject {
  const o = v as Partial<UnstructuredObject> | null;
  return (
    !!o &&
    typeof o === 'object' &&
    typeof o.apiVersion === 'string' &&
    typeof o.kind === 'string' &&
    !!o.metadata &&
    typeof o.metadata === 'object' &&
    typeof o.metadata.name === 'string'
  );
}
