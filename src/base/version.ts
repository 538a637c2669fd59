import { readFileSync } from 'node:fs';

/** cairn's version, read from package.json at call time. */
export function clientVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The image matching this client's version, so client and server agree by default. */
export function defaultImage(): string {
  return `ghcr.io/cairn-backup/cairn:v${clientVersion()}`;
}
