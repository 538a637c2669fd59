/**
 * The IDs of blobs, packs and snapshots (docs/repository-format.md §1): 32 bytes, written as 64 lowercase hex digits
 * in object keys, trees and snapshots. In memory they are the hex string itself, branded per kind so that a pack ID
 * cannot be passed where a blob ID is meant: the brand exists only for the compiler (no wrapper object, no copy), so
 * the index's maps and the hot read paths handle plain strings as before.
 *
 * Bytes become an ID and back only at the edges: the pack and index encodings, the keyed hash of new content, and
 * the worker threads that take IDs as bytes. A snapshot ID from outside (a command line, a resource) is checked.
 */
import { randomBytes } from 'node:crypto';

declare const brand: unique symbol;
type Id<Kind extends string> = string & { readonly [brand]: Kind };

/** A blob: the keyed BLAKE3 hash of its plaintext (crypto.ts ContentHasher). */
export type BlobId = Id<'BlobId'>;
/** A pack: the unkeyed BLAKE3 hash of the whole pack object, stored at `data/<first two hex digits>/<id>`. */
export type PackId = Id<'PackId'>;
/** A snapshot: random, stored at `snapshots/<id>`. */
export type SnapshotId = Id<'SnapshotId'>;

/** Bytes in an ID. */
export const ID_BYTES = 32;

const HEX_ID = /^[0-9a-f]{64}$/;

/** The ID held in bytes[at, at + 32). */
export function blobIdOf(bytes: Buffer, at = 0): BlobId {
  return bytes.toString('hex', at, at + ID_BYTES) as BlobId;
}

/** The ID held in bytes[at, at + 32). */
export function packIdOf(bytes: Buffer, at = 0): PackId {
  return bytes.toString('hex', at, at + ID_BYTES) as PackId;
}

/** An ID's 32 bytes (a new buffer). */
export function idBytes(id: BlobId | PackId | SnapshotId): Buffer {
  return Buffer.from(id, 'hex');
}

/** Writes an ID's 32 bytes into `target` at `at`; returns the offset after them. */
export function writeId(id: BlobId | PackId | SnapshotId, target: Buffer, at: number): number {
  return at + target.write(id, at, ID_BYTES, 'hex');
}

/**
 * Text from outside as a snapshot ID: undefined when it is not 64 lowercase hex digits (the snapshot store says so
 * with a SnapshotNotFoundError of its own).
 */
export function parseSnapshotId(text: string): SnapshotId | undefined {
  return HEX_ID.test(text) ? (text as SnapshotId) : undefined;
}

/** A fresh random snapshot ID. */
export function newSnapshotId(): SnapshotId {
  return randomBytes(ID_BYTES).toString('hex') as SnapshotId;
}
