/**
 * Which index blobs are current, and reading them. An index blob is sealed like a content, its IV the last 32 hex
 * digits of its ID (the hash of its plaintext), before any `-<session>-c<count>` suffix.
 *
 * Repositories of format version 2 and 3 (what kopia and Velero create) keep index blobs in epochs. The epoch being
 * written is the highest N of the markers `xe<N>`. Epoch N's blobs are `xn<N>_<hash>-<session>-c<count>`; a settled
 * epoch (at most the write epoch less 2) may have been compacted into `xs<N>_…`, a complete set of which replaces
 * it; consecutive epochs may have been compacted into range checkpoints `xr<min>_<max>_…`, and the longest chain of
 * complete checkpoints from epoch 0 stands for all epochs it spans. A set is complete when it holds as many blobs of
 * one session as its `-c<count>` says. Epochs after the chain come from their compaction or their `xn` blobs, up to
 * the write epoch plus one.
 *
 * Format version 1 repositories keep `n<hash>` index blobs; compaction logs `m<hash>` (sealed JSON of input and
 * output blobs) retire inputs whose outputs all exist.
 */
import { isNotFound } from '../../plugins/object-store/index.js';
import { RepositoryCorruptError } from '../errors.js';
import type { BlobInfo, KopiaBlobStorage } from './blob-storage.js';
import { blobIv, ContentAuthenticationError, type ContentCipher } from './content-crypto.js';
import { IndexBlob, MergedIndex } from './index.js';

/** An index blob named by the repository's state is gone (deleted under a reader, or lost). */
export class MissingIndexError extends RepositoryCorruptError {}

const LEGACY_POISON = 'n00000000000000000000000000000000-repository_unreadable_by_this_kopia_version_upgrade_required';

interface EpochState {
  writeEpoch: number;
  singleCompactions: Map<number, BlobInfo[]>;
  rangeCheckpoints: { min: number; max: number; blobs: BlobInfo[] }[];
}

/** `xn12_abc…` → 12; `xr3_7_…` → 3. */
export function epochOf(id: string): number | undefined {
  const m = /^[a-z]+(\d+)/.exec(id.split('_')[0] ?? '');
  return m ? Number(m[1]) : undefined;
}

/** The complete sets among blobs, in listing order: a blob without a session suffix is a set by itself. */
export function completeSets(blobs: readonly BlobInfo[]): BlobInfo[][] {
  const sessions = new Map<string, BlobInfo[]>();
  const complete: BlobInfo[][] = [];
  for (const b of blobs) {
    const parts = b.id.split('-');
    const count = parts.length >= 3 && parts[1]!.startsWith('s') && parts[2]!.startsWith('c') ? Number(parts[2]!.slice(1)) : NaN;
    if (!Number.isInteger(count)) {
      complete.push([b]);
      continue;
    }
    const set = [...(sessions.get(parts[1]!) ?? []), b];
    sessions.set(parts[1]!, set);
    if (set.length === count) complete.push(set);
  }
  return complete;
}

/** The chain of range checkpoints from epoch 0 reaching furthest (the shortest such chain on a tie), as kopia picks. */
export function longestRangeChain(ranges: readonly { min: number; max: number; blobs: BlobInfo[] }[]): { min: number; max: number; blobs: BlobInfo[] }[] {
  const byMin = new Map<number, { min: number; max: number; blobs: BlobInfo[] }[]>();
  for (const r of ranges) byMin.set(r.min, [...(byMin.get(r.min) ?? []), r]);
  const memo = new Map<number, { min: number; max: number; blobs: BlobInfo[] }[]>();
  const from = (start: number): { min: number; max: number; blobs: BlobInfo[] }[] => {
    const known = memo.get(start);
    if (known) return known;
    let longest = 0;
    let best: { min: number; max: number; blobs: BlobInfo[] }[] = [];
    for (const cp of byMin.get(start) ?? []) {
      const combined = [cp, ...from(cp.max + 1)];
      const max = combined[combined.length - 1]!.max;
      if (max > longest || (max === longest && combined.length < best.length)) {
        longest = max;
        best = combined;
      }
    }
    memo.set(start, best);
    return best;
  };
  return from(0);
}

async function epochState(blobs: KopiaBlobStorage, signal?: AbortSignal): Promise<EpochState> {
  const [markers, singles, ranges] = await Promise.all([blobs.list('xe', signal), blobs.list('xs', signal), blobs.list('xr', signal)]);
  let writeEpoch = 0;
  for (const m of markers) writeEpoch = Math.max(writeEpoch, epochOf(m.id) ?? 0);
  const singleCompactions = new Map<number, BlobInfo[]>();
  const byEpoch = new Map<number, BlobInfo[]>();
  for (const s of singles) {
    const n = epochOf(s.id);
    if (n !== undefined) byEpoch.set(n, [...(byEpoch.get(n) ?? []), s]);
  }
  for (const [n, list] of byEpoch) {
    const first = completeSets(list)[0];
    if (first) singleCompactions.set(n, first);
  }
  const byRange = new Map<string, BlobInfo[]>();
  for (const r of ranges) {
    const m = /^xr(\d+)_(\d+)_/.exec(r.id);
    if (m) byRange.set(`${m[1]}_${m[2]}`, [...(byRange.get(`${m[1]}_${m[2]}`) ?? []), r]);
  }
  const rangeCheckpoints: EpochState['rangeCheckpoints'] = [];
  for (const [k, list] of byRange) {
    const first = completeSets(list)[0];
    const [min, max] = k.split('_').map(Number) as [number, number];
    if (first) rangeCheckpoints.push({ min, max, blobs: first });
  }
  return { writeEpoch, singleCompactions, rangeCheckpoints };
}

/** The index blobs a reader uses now, in the order kopia lists them. */
export async function activeIndexBlobs(blobs: KopiaBlobStorage, opts: { epochs: boolean; cipher: ContentCipher; signal?: AbortSignal }): Promise<BlobInfo[]> {
  if (!opts.epochs) return legacyActiveBlobs(blobs, opts.cipher, opts.signal);
  const state = await epochState(blobs, opts.signal);
  const result: BlobInfo[] = [];
  let start = 0;
  for (const c of longestRangeChain(state.rangeCheckpoints)) {
    if (c.max > start) {
      result.push(...c.blobs);
      start = c.max + 1;
    }
  }
  const lastSettled = state.writeEpoch - 2;
  const perEpoch = await Promise.all(
    Array.from({ length: Math.max(0, state.writeEpoch + 1 - start + 1) }, async (_, i) => {
      const epoch = start + i;
      const compacted = state.singleCompactions.get(epoch);
      if (epoch <= lastSettled && compacted) return compacted;
      return blobs.list(`xn${epoch}_`, opts.signal);
    }),
  );
  for (const list of perEpoch) result.push(...list);
  return result;
}

async function legacyActiveBlobs(blobs: KopiaBlobStorage, cipher: ContentCipher, signal?: AbortSignal): Promise<BlobInfo[]> {
  const [indexes, logs] = await Promise.all([blobs.list('n', signal), blobs.list('m', signal)]);
  const present = new Map(indexes.filter((b) => b.id !== LEGACY_POISON).map((b) => [b.id, b]));
  const retired = new Set<string>();
  for (const log of logs) {
    let entry: { inputMetadata?: { id?: string }[]; outputMetadata?: { id?: string }[] };
    try {
      entry = JSON.parse(openSealedBlob(await blobs.get(log.id, undefined, signal), log.id, cipher).toString('utf8')) as typeof entry;
    } catch (err) {
      if (isNotFound(err)) continue; // retired meanwhile
      throw err;
    }
    const outputs = (entry.outputMetadata ?? []).map((o) => o.id ?? '');
    if (outputs.every((o) => present.has(o))) for (const i of entry.inputMetadata ?? []) retired.add(i.id ?? '');
  }
  return [...present.values()].filter((b) => !retired.has(b.id));
}

/** Opens a sealed index (or compaction log) blob; its IV comes from its ID. */
export function openSealedBlob(sealed: Buffer, id: string, cipher: ContentCipher): Buffer {
  try {
    return cipher.open(sealed, blobIv(id));
  } catch (err) {
    if (err instanceof ContentAuthenticationError) throw new RepositoryCorruptError(`index blob ${id} does not authenticate (corrupted, or not of this repository)`);
    throw err;
  }
}

/** Reads and parses every active index blob, a few at a time. */
export async function loadMergedIndex(
  blobs: KopiaBlobStorage,
  opts: { epochs: boolean; cipher: ContentCipher; signal?: AbortSignal; concurrency?: number },
): Promise<MergedIndex> {
  const active = await activeIndexBlobs(blobs, opts);
  const parsed: IndexBlob[] = new Array<IndexBlob>(active.length);
  let next = 0;
  const worker = async () => {
    while (next < active.length) {
      const i = next++;
      const b = active[i]!;
      let sealed: Buffer;
      try {
        sealed = await blobs.get(b.id, undefined, opts.signal);
      } catch (err) {
        if (isNotFound(err)) throw new MissingIndexError(`index blob ${b.id} is missing from ${blobs.description}`);
        throw err;
      }
      parsed[i] = new IndexBlob(openSealedBlob(sealed, b.id, opts.cipher), b.id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 8, active.length) }, worker));
  return new MergedIndex(parsed);
}
