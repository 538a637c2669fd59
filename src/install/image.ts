import { clientVersion } from '../version.js';

/** The image matching this client's version, so client and server agree by default. */
export function defaultImage(): string {
  return `ghcr.io/cairn-backup/cairn:v${clientVersion()}`;
}
