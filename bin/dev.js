#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step), for development.
import { fileURLToPath } from 'node:url';
import { ensureNode24 } from './node24.js';

ensureNode24(fileURLToPath(import.meta.url), ['--import', 'tsx']);
if (!process.execArgv.some((a) => a.includes('tsx'))) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { execute } = await import('@oclif/core');
await execute({ development: true, dir: import.meta.url });
