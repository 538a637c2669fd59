#!/usr/bin/env node
import module from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ensureNode24 } from './node24.js';

ensureNode24(fileURLToPath(import.meta.url));
// A container may run as a user with no passwd entry (an arbitrary runAsUser) and without $HOME or $SHELL; oclif
// asks for the home directory and, without $SHELL, for the passwd entry's shell, and both then throw. Stand-ins.
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
const { execute } = await import('@oclif/core');
await execute({ dir: import.meta.url });
