// The layers of src/ and the one direction imports may run (docs/architecture.md draws it):
//
//   commands → cli → server | agent | install → storage → datapath → plugins → api | kube → base
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
