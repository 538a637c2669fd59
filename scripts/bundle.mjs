// Bundles the compiled program (dist/main/cairn.js, from src/main/cairn.ts) with everything it imports, our modules
// and the dependencies', into dist/main/: a cairn process then loads a few files instead of ~1,400 modules, most of
// a short command's start-up. `npm run build` runs it after tsc; the Containerfile's build stage runs it too.
//
// Usage: node scripts/bundle.mjs [DIST]   (DIST defaults to dist)
//
// Every file of the bundle sits in DIST/main/, two levels below the package root like the compiled modules it
// replaces, so what they find relative to their own URL still resolves: the package.json (version), proto/ (the
// plugin protocol), and the data path's worker modules, which are entry points of their own here (worker threads
// load them by URL). Modules a dynamic import loads (the S3 client, the plugin client) become chunks loaded on use.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
// Every module a worker thread runs: worker-entry and each `*-worker` module of the data path (worker-threads.ts),
// found rather than listed, so that a new worker module cannot be left out of the bundle.
const WORKER_MODULES = [
  'worker-entry',
  ...readdirSync(join(dist, 'datapath'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('-worker.js'))
    .map((file) => file.slice(0, -'.js'.length))
    .sort(),
];

await build({
  entryPoints: [{ in: join(dist, 'main', 'cairn.js'), out: 'cairn' }, ...WORKER_MODULES.map((name) => ({ in: join(dist, 'datapath', `${name}.js`), out: name }))],
  outdir: join(dist, 'main'),
  chunkNames: 'chunk-[hash]',
  // The program's own entry is compiled into DIST/main/ and replaced by its bundle.
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // oclif reads tsconfig files with TypeScript only when it runs commands from sources (bin/dev.js); TypeScript is
  // a development dependency and no part of the program.
  external: ['typescript', 'koffi'],
  // Dependencies written as CommonJS call require() for Node's own modules; an ES module has no require, so each
  // file of the bundle makes one from its own URL (esbuild's documented way for ESM output on Node).
  banner: { js: "import { createRequire as __cairnCreateRequire } from 'node:module'; const require = __cairnCreateRequire(import.meta.url);" },
  // Stack traces map back to src/ with `node --enable-source-maps` (esbuild chains tsc's maps).
  sourcemap: 'linked',
  legalComments: 'linked',
  // Without comments and whitespace (names are kept, so stack traces still name functions; the linked maps give the
  // lines). V8 keeps the source text of every module it loaded for the life of the process, outside its heap for a
  // file over ~1 MB, and as two bytes a character when a file holds one non-ASCII character (a comment's dash or §):
  // the server's loaded sources took 21 MB of external memory, 7 MB without comments, and its RSS at rest fell by
  // ~13 MB, as does every other cairn process's (node agent, data movers and their worker threads).
  minifyWhitespace: true,
  logLevel: 'warning',
});
