#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { ensureNode24 } from './node24.js';

ensureNode24(fileURLToPath(import.meta.url));
const { execute } = await import('@oclif/core');
await execute({ dir: import.meta.url });
