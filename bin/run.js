#!/usr/bin/env node
import module from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ensureNode24 } from './node24.js';

ensureNode24(fileURLToPath(import.meta.url));
// A container may run as a user ID the image's /etc/passwd does not list (any runAsUser a pod spec picks: the
// restore helper's 1000, OpenShift's random IDs), and without $HOME or $SHELL. oclif asks for the home directory
// and, without $SHELL, for the login shell (os.userInfo), and both then throw before any command starts. The
// temporary directory and a plain sh are all oclif needs them for.
let noPasswdEntry = false;
try {
  userInfo();
} catch {
  noPasswdEntry = true;
}
if (noPasswdEntry) {
  process.env.HOME ??= tmpdir();
  process.env.SHELL ??= '/bin/sh';
}
// V8's code cache on disk (under the OS temp dir): every command starts ~40 ms sooner, which short commands (an
// unchanged `repo backup` takes ~0.4 s) notice. It never throws; where the directory cannot be written it stays off.
module.enableCompileCache?.();
// A reader that stops early (`cairn backup get | head -1`) closes the pipe: the write fails with EPIPE, oclif's
// pending write never settles, and Node would end with an "unsettled top-level await" warning and exit code 13.
// End at once with 141 instead, the status a shell reports for a command that SIGPIPE ended (as it ends the
// `velero` CLI and most Unix tools): no noise, and a script with `pipefail` still learns the output was cut short
// (with `--wait`, before the result was known).
const SIGPIPE_STATUS = 141;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(SIGPIPE_STATUS);
    throw err;
  });
}
// The installed program always runs its bundle. oclif would run the TypeScript sources instead (through tsx) when
// NODE_ENV is "test" or "development" and src/ is next to dist/, as under a test runner; bin/dev.js is for that.
globalThis.oclif = { ...globalThis.oclif, enableAutoTranspile: false };
// The program is one bundle (dist/main/, see src/main/cairn.ts): its own copy of oclif runs the commands it holds.
const { execute } = await import('../dist/main/cairn.js');
await execute({ dir: import.meta.url });
