// Rules of the house that ESLint holds for src/ (eslint.config.js uses them; test/unit/lint-rules.test.ts proves
// them): the layer order, no source code in strings and no Node internals.
//
// The layers of src/ and the one direction imports may run (docs/architecture.md draws it):
//
//   main → commands → cli → server | agent | install → storage → datapath → plugins → api | kube → base
//
// Each folder may import the folders below it, never one above it or a sibling on its own level. tools/, test/,
// bench/ and scripts/ may import anything. The rule is ESLint's own no-restricted-imports, one block per folder,
// matching relative specifiers that climb out of the folder into a forbidden one.

/** Every top-level folder of src/ and the folders it may import (besides itself). */
export const LAYERS = {
  base: [],
  api: ['base'],
  kube: ['base'],
  plugins: ['api', 'kube', 'base'],
  datapath: ['plugins', 'api', 'kube', 'base'],
  storage: ['datapath', 'plugins', 'api', 'kube', 'base'],
  server: ['storage', 'datapath', 'plugins', 'api', 'kube', 'base'],
  agent: ['storage', 'datapath', 'plugins', 'api', 'kube', 'base'],
  install: ['storage', 'datapath', 'plugins', 'api', 'kube', 'base'],
  cli: ['server', 'agent', 'install', 'storage', 'datapath', 'plugins', 'api', 'kube', 'base'],
  commands: ['cli', 'server', 'agent', 'install', 'storage', 'datapath', 'plugins', 'api', 'kube', 'base'],
  // The program: every command, for oclif and the bundle (src/main/cairn.ts).
  main: ['commands', 'cli', 'server', 'agent', 'install', 'storage', 'datapath', 'plugins', 'api', 'kube', 'base'],
};

/** One flat-config block per folder: an import that climbs into a folder it may not use is an error. */
export function layerRules() {
  const all = Object.keys(LAYERS);
  return all.map((layer) => {
    const forbidden = all.filter((other) => other !== layer && !LAYERS[layer].includes(other));
    const allowed = LAYERS[layer].length ? LAYERS[layer].join(', ') : 'nothing of ours';
    return {
      files: [`src/${layer}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: forbidden.length
              ? [
                  {
                    regex: `^(\\.\\./)+(${forbidden.join('|')})/`,
                    message: `src/${layer} may import only ${allowed} (layers run one way: see docs/architecture.md).`,
                  },
                ]
              : [],
          },
        ],
      },
    };
  });
}

/**
 * Node's undocumented internals cairn must not reach into: a Node upgrade may change them without notice. The one
 * exception, src/datapath/compress.ts (ZstdContext), says why, falls back when they are gone, and has a test that
 * fails loudly when they are.
 */
const NODE_INTERNALS = /^_(handle|writeState|finishFlushFlag|processChunk|outBuffer|outOffset|chunkSize|readableState|writableState|events|eventsCount|idleTimeout|onTimeout)$/;
const ALLOWED_INTERNALS = ['src/datapath/compress.ts'];

/** Source code in strings: eval'd workers and the vm module's compilers (Function and eval are core rules). */
const CODE_IN_STRINGS = [
  {
    selector: "NewExpression[callee.name='Worker'] Property[key.name='eval']",
    message: 'No worker code in strings: a worker runs a module of its own (see src/datapath/worker-threads.ts).',
  },
  {
    selector: 'ImportSpecifier[imported.name=/^(runInNewContext|runInThisContext|runInContext|compileFunction|Script|SourceTextModule)$/]',
    message: 'No code in strings: write it as a module that tsc and ESLint see.',
  },
  {
    selector: 'MemberExpression[property.name=/^(runInNewContext|runInThisContext|runInContext|compileFunction|Script|SourceTextModule)$/]',
    message: 'No code in strings: write it as a module that tsc and ESLint see.',
  },
];

const internalsSelector = {
  selector: `Identifier[name=${NODE_INTERNALS}]`,
  message: "No Node internals (undocumented '_' fields): use Node's public API.",
};

/** Config blocks for src/: no code in strings, no Node internals (except where ALLOWED_INTERNALS says). */
export function sourceRules() {
  const core = { 'no-eval': 'error', 'no-new-func': 'error', 'no-implied-eval': 'error' };
  return [
    {
      files: ['src/**/*.ts'],
      ignores: ALLOWED_INTERNALS,
      rules: { ...core, 'no-restricted-syntax': ['error', ...CODE_IN_STRINGS, internalsSelector] },
    },
    {
      files: ALLOWED_INTERNALS,
      rules: { ...core, 'no-restricted-syntax': ['error', ...CODE_IN_STRINGS] },
    },
  ];
}
