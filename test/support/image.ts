/**
 * cairn's image for the tests that run it (tools/image/test-bed-image.ts): built from this tree and exported once
 * per test process as an OCI archive.
 */
import { ensureImageArchive, type ImageArchive } from '../../tools/image/test-bed-image.js';

export type TestImage = ImageArchive;

export function ensureImage(log: (line: string) => void = (l) => process.stderr.write(`[image] ${l}\n`)): Promise<TestImage> {
  return ensureImageArchive(log);
}
