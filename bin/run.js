#!/usr/bin/env node
import module from 'node:module';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ensureNode24 } from './node24.js';

ensureNode24(fileURLToPath(import.meta.url));
// V8's code cache on disk (under the OS temp dir): every command starts ~40 ms sooner, which short commands (an
// unchanged `repo backup` takes ~0.4 s) notice. It never throws; where the directory cannot be written it stays off.
module.enableCompileCache?.();
// oclif looks up the login shell (os.userInfo) when $SHELL is unset, and that throws for a user ID the image's
// /etc/passwd does not list: any runAsUser a pod spec picks (the restore helper's 1000, OpenShift's random IDs)
// would crash every command before it starts. A plain sh is all oclif needs it for.
if (!process.env.SHELL) {
  try {
    userInfo();
  } catch {
    process.env.SHELL = '/bin/sh';
  }
}
const { execute } = await import('@oclif/core');
await execute({ dir: import.meta.url });
