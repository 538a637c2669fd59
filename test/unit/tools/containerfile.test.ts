/**
 * The image carries what the published package carries: every path in package.json's `files` (the runtime's own
 * files: bin, dist, the plugin protocol's .proto files, oclif's manifest) is let into the build context and copied
 * into the runtime stage. A path left out fails only when that feature first runs inside a cluster, so it is checked
 * here, in milliseconds, from the files themselves.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const read = (name: string) => readFileSync(join(ROOT, name), 'utf8');
const runtimeFiles = (JSON.parse(read('package.json')) as { files: string[] }).files;

/** `dist/main` is compiled and bundled in the build stage from src/, not copied from the context. */
const COMPILED = new Set(['dist/main']);

describe('the Containerfile', () => {
  const containerfile = read('Containerfile');
  const runtimeStage = containerfile.slice(containerfile.lastIndexOf('\nFROM '));

  it.each(runtimeFiles)('copies %s into the runtime image', (path) => {
    expect(runtimeStage).toMatch(new RegExp(`^COPY --from=build (\\S+ )*/src/${path}( |$)`, 'm'));
  });

  it.each(['.containerignore', '.dockerignore'])('lets every copied source path through %s', (ignoreFile) => {
    const allowed = read(ignoreFile)
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1).replace(/\/$/, ''));
    for (const path of runtimeFiles.filter((p) => !COMPILED.has(p))) expect(allowed, path).toContain(path);
  });
});
