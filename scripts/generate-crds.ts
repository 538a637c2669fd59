// Writes config/crd/<version>/bases/velero.io_<plural>.yaml from the TypeBox schemas in src/api, and the Helm
// chart's copies of what `install` also creates (charts/cairn/files: the CRDs and the RBAC rules), so the chart and
// `install` have one source. `--check` writes nothing and exits 1 when a committed file is missing or stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCrdFiles } from '../src/api/crd.js';
import { renderChartFiles } from '../src/install/chart-files.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
let stale = 0;
for (const file of [...renderCrdFiles(), ...renderChartFiles()]) {
  const target = resolve(root, file.path);
  let current: string | undefined;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === file.content) continue;
  if (check) {
    console.error(`stale: ${file.path} (run npm run generate:crds)`);
    stale++;
    continue;
  }
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, file.content);
  console.log(`wrote ${file.path}`);
}
process.exitCode = stale > 0 ? 1 : 0;
