// Compiles src/ to dist/ and regenerates oclif.manifest.json (committed; CI fails when it is stale).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit' });
rmSync('dist', { recursive: true, force: true });
run('tsc', ['-p', 'tsconfig.json']);
run('oclif', ['manifest']);
// The CRD YAML under config/crd is generated from src/api and committed; fail here when it is stale.
run('tsx', ['scripts/generate-crds.ts', '--check']);
