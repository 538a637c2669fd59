// The rules of eslint.rules.js: the layer rule refuses an import that runs up or sideways, allows one that runs
// down, and its folders are exactly the top-level folders of src/; the source rules refuse code in strings and Node
// internals.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
interface RulesModule {
  LAYERS: Record<string, string[]>;
  layerRules(): Linter.Config[];
  sourceRules(): Linter.Config[];
}
let layers: RulesModule;
let eslint: ESLint;

beforeAll(async () => {
  layers = (await import(pathToFileURL(join(root, 'eslint.rules.js')).href)) as RulesModule;
  eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser } }, ...layers.layerRules(), ...layers.sourceRules()],
  });
});

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
  return (result?.messages ?? []).map((m) => m.message);
}

describe('layer rule', () => {
  it.each([
    ['src/api/kinds/x.ts', "import { x } from '../../server/context.js';"],
    ['src/kube/x.ts', "import type { Backup } from '../api/index.js';"],
    ['src/base/x.ts', "export { x } from '../kube/client.js';"],
    ['src/plugins/item-actions/x.ts', "import type { X } from '../../server/restore/pv-policy.js';"],
    ['src/server/x.ts', "import { x } from '../agent/node-agent.js';"],
    ['src/agent/microservice/x.ts', "import { x } from '../../server/health.js';"],
    ['src/datapath/x.ts', "import { x } from '../storage/layout.js';"],
    ['src/server/backup/x.ts', "import { x } from '../../cli/logger.js';"],
  ])('refuses %s importing up or sideways: %s', async (file, code) => {
    expect(await problems(file, code)).toEqual([expect.stringContaining('layers run one way')]);
  });

  it.each([
    ['src/api/x.ts', "import { x } from '../base/errors.js';"],
    ['src/server/backup/x.ts', "import { x } from '../../storage/layout.js';\nimport { y } from '../restore/pv-policy.js';"],
    ['src/cli/describe/x.ts', "import { x } from '../../server/download/client.js';"],
    ['src/commands/backup/x.ts', "import { x } from '../../agent/node-agent.js';"],
    ['test/unit/x.test.ts', "import { x } from '../../src/server/context.js';"],
  ])('allows %s importing down: %s', async (file, code) => {
    expect(await problems(file, code)).toEqual([]);
  });

  it('names every top-level folder of src/, and no folder inside src/ repeats a layer name', () => {
    const top = readdirSync(join(root, 'src'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(Object.keys(layers.LAYERS).sort()).toEqual(top.sort());
    const nested = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
      .filter((d) => d.isDirectory() && d.parentPath !== join(root, 'src') && top.includes(d.name))
      .map((d) => join(d.parentPath, d.name));
    expect(nested).toEqual([]);
  });
});

describe('source rules', () => {
  it.each([
    ['src/datapath/x.ts', "import { Worker } from 'node:worker_threads';\nexport const w = new Worker('postMessage(1)', { eval: true });", 'No worker code in strings'],
    ['src/datapath/x.ts', "export const f = new Function('a', 'return a');", 'Function'],
    ['src/server/x.ts', "export const f = (s: string): unknown => eval(s);", 'eval'],
    ['src/datapath/x.ts', "import { runInNewContext } from 'node:vm';\nexport const g = runInNewContext('1');", 'No code in strings'],
    ['src/kube/x.ts', "import * as vm from 'node:vm';\nexport const g = vm.runInThisContext('1');", 'No code in strings'],
    ['src/datapath/x.ts', "import { createZstdCompress } from 'node:zlib';\nexport const h = (createZstdCompress() as unknown as { _handle: unknown })._handle;", 'No Node internals'],
    ['src/agent/x.ts', "export function f(s: { _writeState?: Uint32Array }): unknown { return s._writeState; }", 'No Node internals'],
  ])('refuses %s: %s', async (file, code, message) => {
    expect((await problems(file, code)).join('\n')).toContain(message);
  });

  it('allows the one documented use of a Node internal (ZstdContext), and leaves tests and tools alone', async () => {
    const code = "export function f(s: { _handle?: unknown }): unknown { return s._handle; }";
    expect(await problems('src/datapath/compress.ts', code)).toEqual([]);
    expect(await problems('test/unit/x.test.ts', code)).toEqual([]);
  });
});
