// The program lists every command under src/commands/ by the ID oclif's directory convention gives it (a new
// command that is not added to src/main/cairn.ts would not exist in the built program), and nothing else.
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/main/cairn.js';

const COMMANDS_DIR = resolve(import.meta.dirname, '../../../src/commands');

function commandIds(): string[] {
  return readdirSync(COMMANDS_DIR, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(COMMANDS_DIR, join(entry.parentPath, entry.name)).replace(/\.ts$/, '').split('/').join(':'))
    .sort();
}

describe('the program', () => {
  it('holds every command of src/commands/ under its ID, and only those', () => {
    expect(Object.keys(COMMANDS).sort()).toEqual(commandIds());
  });

  it.each(Object.entries(COMMANDS))('%s is a command class', (_id, command) => {
    expect(typeof command.run).toBe('function');
  });
});
