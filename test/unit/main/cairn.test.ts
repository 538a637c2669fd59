// The program lists every command under src/commands/ by the ID oclif's directory convention gives it (a new
// command that is not added to src/main/cairn.ts would not exist in the built program), and nothing else.
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_LOADERS, COMMANDS, commandIdOf, loadCommands } from '../../../src/main/cairn.js';

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

describe('loading only the command a run names', () => {
  const ids = Object.keys(COMMAND_LOADERS);

  it('lists a loader for every command', () => {
    expect(ids.sort()).toEqual(commandIds());
  });

  it.each([
    [['backup', 'get'], 'backup:get'],
    [['backup', 'get', 'nightly', '-o', 'json'], 'backup:get'],
    [['backup:get', '--kubeconfig', 'k'], 'backup:get'],
    [['client', 'config', 'set', 'namespace=x'], 'client:config:set'],
    [['version', '--client-only'], 'version'],
    [['server', '--log-level', 'debug'], 'server'],
  ])('%j runs %s', (argv, id) => {
    expect(commandIdOf(argv, ids)).toBe(id);
  });

  it.each([[[]], [['--help']], [['backup']], [['help', 'backup', 'get']], [['bakup', 'get']], [['manifest']]])('%j names no command: every one is loaded', async (argv) => {
    expect(commandIdOf(argv, ids)).toBeUndefined();
    expect(Object.keys(await loadCommands(argv)).sort()).toEqual(commandIds());
  });

  it('a run that names a command loads that one only', async () => {
    const loaded = await loadCommands(['version', '--client-only']);
    expect(Object.keys(loaded)).toEqual(['version']);
    expect(loaded.version).toBe(COMMANDS.version);
  });
});
