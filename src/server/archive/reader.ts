/**
 * Reads a backup tarball (`<backup>.tar.gz`, docs/backup.md) from a stream: gunzip → tar entries →
 * items keyed by their path (parsed with ./paths.ts, the same functions the writer uses). The restore reads the
 * unversioned copy of each item; the `<version>-preferredversion/` copies are expected and passed over, anything
 * else unexpected becomes a warning, never a failure.
 *
 * A reader that takes only some items (`select`, decided from the path before the body is read; `keep`, decided
 * from the parsed item) reads the others past in the stream: their bodies are never buffered, parsed or held, so
 * the memory a read needs follows what it keeps, not the size of the backup.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import type { UnstructuredObject } from '../../plugins/item-actions/types.js';
import { FORMAT_VERSION_PATH, parseItemPath } from './paths.js';

/** Where an item is in the archive: its group-resource, namespace (none when cluster-scoped) and name. */
export interface ArchiveItemRef {
  /** `resource.group` as in the archive path. */
  groupResource: string;
  namespace?: string;
  name: string;
}

export interface ArchiveItem extends ArchiveItemRef {
  object: UnstructuredObject;
}

export interface BackupArchive {
  /** Content of `metadata/version` (e.g. `1.1.0`), undefined when missing. */
  formatVersion?: string;
  items: ArchiveItem[];
  /** Files the reader skipped, with the reason. */
  warnings: string[];
  /**
   * The key (archiveItemKey) of every item file of the archive, read or read past, in archive order; undefined when
   * `items` is the whole archive (built in memory). An item read past may still be unreadable (not valid JSON).
   */
  present?: ReadonlySet<string>;
}

export interface ReadArchiveOptions {
  /** Refuse single entries bigger than this (a corrupt or hostile archive must not exhaust memory). */
  maxEntryBytes?: number;
  /** Keep only the items of these group-resources (the rest is read past, never parsed or held). */
  onlyGroupResources?: readonly string[];
  /** Whether to read the item at this path; an item it refuses is read past, never parsed or held. */
  select?: (ref: ArchiveItemRef) => boolean;
  /** Whether to hold an item once parsed (a choice the path cannot make, e.g. a label selector); the rest is dropped. */
  keep?: (item: ArchiveItem) => boolean;
}

const DEFAULT_MAX_ENTRY_BYTES = 64 * 1024 * 1024;

/** `groupResource/namespace/name` (empty namespace when cluster-scoped): one item of an archive. */
export function archiveItemKey(ref: ArchiveItemRef): string {
  return `${ref.groupResource}/${ref.namespace ?? ''}/${ref.name}`;
}

export async function readBackupArchive(input: Readable, opts: ReadArchiveOptions = {}): Promise<BackupArchive> {
  const maxEntryBytes = opts.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  const present = new Set<string>();
  const result: BackupArchive = { items: [], warnings: [], present };
  const wanted = (ref: ArchiveItemRef) => (!opts.onlyGroupResources || opts.onlyGroupResources.includes(ref.groupResource)) && (!opts.select || opts.select(ref));
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
      const parsed = path === FORMAT_VERSION_PATH ? undefined : parseItemPath(path);
      if (parsed?.preferredVersion) {
        entry.resume();
        continue;
      }
      const ref = parsed ? itemRef(parsed) : undefined;
      if (ref) present.add(archiveItemKey(ref));
      // A read for some group-resources only has no use for the rest, warnings included.
      const skip = ref ? !wanted(ref) : opts.onlyGroupResources !== undefined || path !== FORMAT_VERSION_PATH;
      if (skip) {
        if (!ref && !opts.onlyGroupResources) result.warnings.push(`ignored unexpected file ${path} in the backup archive`);
        entry.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
      if (ref) addItem(result, path, ref, text, opts.keep);
      else result.formatVersion = text.trim();
    }
  })();
  await Promise.all([pipeline(input, createGunzip(), tar), consume]);
  return result;
}

function stripDotSlash(name: string): string {
  return name.replace(/^\.\//, '').replace(/^\/+/, '');
}

function itemRef(p: ArchiveItemRef): ArchiveItemRef {
  return { groupResource: p.groupResource, ...(p.namespace !== undefined ? { namespace: p.namespace } : {}), name: p.name };
}

function addItem(result: BackupArchive, path: string, ref: ArchiveItemRef, text: string, keep: ReadArchiveOptions['keep']): void {
  let object: unknown;
  try {
    object = JSON.parse(text);
  } catch {
    result.warnings.push(`ignored ${path}: not valid JSON`);
    return;
  }
  if (!isObject(object)) {
    result.warnings.push(`ignored ${path}: not a Kubernetes object (apiVersion, kind and metadata.name are needed)`);
    return;
  }
  const item: ArchiveItem = { ...ref, object };
  if (!keep || keep(item)) result.items.push(item);
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
