#!/usr/bin/env node
import module from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ensureNode24 } from './node24.js';

ensureNode24(fileURLToPath(import.meta.url));
// A container may run as a user with no passwd entry and no $HOME (an arbitrary runAsUser); oclif asks for the home
// directory, which then throws. The temporary directory stands in for it.
if (!process.env.HOME) {
  try {
    homedir();
  } catch {
    process.env.HOME = tmpdir();
  }
}
// V8's code cache on disk (under the OS temp dir): every command starts ~40 ms sooner, which short commands (an
// unchanged `repo backup` takes ~0.4 s) notice. It never throws; where the directory cannot be written it stays off.
module.enableCompileCache?.();
const { execute } = await import('@oclif/core');
await execute({ dir: import.meta.url });
