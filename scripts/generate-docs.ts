// Rewrites the generated blocks of docs/rbac.md (rules and the access matrix, from src/install/rbac.ts).
// `--check` writes nothing and exits 1 when the committed doc is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withGeneratedBlocks } from '../src/install/rbac-doc.js';

const file = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'docs/rbac.md');
const current = readFileSync(file, 'utf8');
const next = withGeneratedBlocks(current);
if (next === current) process.exit(0);
if (process.argv.includes('--check')) {
  console.error('stale: docs/rbac.md (run npm run generate:docs)');
  process.exit(1);
}
writeFileSync(file, next);
console.log('wrote docs/rbac.md');
