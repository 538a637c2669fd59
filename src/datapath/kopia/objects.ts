/**
 * kopia's objects: a byte stream stored as one content (a direct object, its ID the content ID) or split into
 * several, listed by an index object (an indirect object: ID `I` + the index object's ID). An index object is JSON
 * `{"stream":"kopia:indirect","entries":[{"s":start,"l":length,"o":"<object ID>"}]}` and may itself be indirect
 * (`II…`). A `Z` before the content ID marks an object compressed before it was stored (its bytes start with a
 * compression header); a `D` is a legacy marker and means nothing. Content IDs of file data have no prefix letter;
 * directory listings use `k`, index objects `x`, manifests `m`.
 */
import { RepositoryCorruptError } from '../errors.js';
import { decompressWithHeader } from './compression.js';
import type { KopiaContents } from './contents.js';
import type { ContentInfo } from './index.js';

export interface ObjectId {
  indirection: number;
  compressed: boolean;
  contentId: string;
}

export function parseObjectId(s: string): ObjectId {
  let rest = s;
  let indirection = 0;
  while (rest.startsWith('I')) {
    indirection++;
    rest = rest.slice(1);
  }
  let compressed = false;
  if (rest.startsWith('Z')) {
    compressed = true;
    rest = rest.slice(1);
  }
  if (rest.startsWith('D')) rest = rest.slice(1);
  if (indirection > 0 && compressed) throw new RepositoryCorruptError(`malformed object ID ${s}: compression and indirection are exclusive`);
  if (!/^([g-z])?([0-9a-f]{2})+$/.test(rest)) throw new RepositoryCorruptError(`malformed object ID ${JSON.stringify(s)}`);
  return { indirection, compressed, contentId: rest };
}

export function formatObjectId(id: ObjectId): string {
  return 'I'.repeat(id.indirection) + (id.compressed ? 'Z' : '') + id.contentId;
}

/** One stored piece of an object, in order: `length` bytes at `start` of the object. */
export interface ObjectChunk {
  start: number;
  length: number;
  /** A direct object. */
  object: ObjectId;
}

interface IndirectEntry {
  s?: number;
  l?: number;
  o?: string;
}

/**
 * The length of a direct object as its index entry tells it: -1 when the object is compressed, whose length is known
 * only once read (callers that need it read it).
 */
export function directObjectLength(id: ObjectId, info: ContentInfo): number {
  return id.compressed ? -1 : info.originalLength;
}

export class KopiaObjects {
  constructor(private readonly contents: KopiaContents) {}

  /** The bytes of a direct object (decompressed when its ID says so). */
  async readDirect(id: ObjectId, signal?: AbortSignal): Promise<Buffer> {
    if (id.indirection > 0) throw new Error('readDirect of an indirect object');
    const data = await this.contents.get(id.contentId, signal);
    return id.compressed ? decompressWithHeader(data) : data;
  }

  /** The direct objects an object is made of, in order (one for a direct object). */
  async chunks(id: ObjectId, signal?: AbortSignal): Promise<ObjectChunk[]> {
    if (id.indirection === 0) {
      return [{ start: 0, length: directObjectLength(id, this.contents.info(id.contentId)), object: id }];
    }
    const indexObject: ObjectId = { ...id, indirection: id.indirection - 1 };
    const raw = await this.read(indexObject, signal);
    let parsed: { entries?: IndirectEntry[] };
    try {
      parsed = JSON.parse(raw.toString('utf8')) as { entries?: IndirectEntry[] };
    } catch (err) {
      throw new RepositoryCorruptError(`index object ${formatObjectId(indexObject)} is not JSON: ${(err as Error).message}`);
    }
    const out: ObjectChunk[] = [];
    let expected = 0;
    for (const e of parsed.entries ?? []) {
      const start = e.s ?? 0;
      const length = e.l ?? 0;
      if (start !== expected) throw new RepositoryCorruptError(`index object ${formatObjectId(indexObject)} has a gap at ${expected}`);
      expected = start + length;
      const child = parseObjectId(e.o ?? '');
      if (child.indirection > 0) {
        // A deeper level: its own chunks, shifted to where it starts.
        for (const c of await this.chunks(child, signal)) out.push({ ...c, start: start + c.start });
      } else out.push({ start, length, object: child });
    }
    return out;
  }

  /** A whole object in memory (directory listings, index objects: small). */
  async read(id: ObjectId, signal?: AbortSignal): Promise<Buffer> {
    if (id.indirection === 0) return this.readDirect(id, signal);
    const parts: Buffer[] = [];
    for (const c of await this.chunks(id, signal)) {
      const data = await this.readDirect(c.object, signal);
      if (c.length >= 0 && data.length !== c.length) throw new RepositoryCorruptError(`object piece ${formatObjectId(c.object)} has ${data.length} bytes, its index says ${c.length}`);
      parts.push(data);
    }
    return Buffer.concat(parts);
  }
}
