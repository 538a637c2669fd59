// The client config file (`cairn client config set|get`) and what every command takes from it: the namespace
// default and colour; and the global --kubecontext spelling of --context.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  applySet,
  clientConfigPath,
  configColorized,
  configFeatures,
  configNamespace,
  formatGet,
  loadClientConfig,
  saveClientConfig,
  unusedKeys,
} from '../../../src/cli/client-config.js';
import { colourEnabled } from '../../../src/cli/colour.js';
import { BaseCommand } from '../../../src/cli/base-command.js';
import ClientConfigSet from '../../../src/commands/client/config/set.js';
import ClientConfigGet from '../../../src/commands/client/config/get.js';
import { usageMessage } from './usage-message.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('client config file', () => {
  it('lives under $XDG_CONFIG_HOME/cairn, else ~/.config/cairn (never velero\'s)', () => {
    expect(clientConfigPath({ XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/x/cairn/config.json');
    expect(clientConfigPath({ HOME: '/h' })).toBe('/h/.config/cairn/config.json');
  });

  it('reads Velero\'s format: string values, colorized parsed as Go booleans, true unless it says false', () => {
    const c = { namespace: 'backup-system', colorized: 'F', features: 'EnableCSI, EnableAPIGroupVersions' };
    expect(configNamespace(c)).toBe('backup-system');
    expect(configColorized(c)).toBe(false);
    expect(configColorized({})).toBe(true);
    expect(configColorized({ colorized: 'maybe' })).toBe(true);
    expect(configColorized({ colorized: false })).toBe(false);
    expect(configFeatures(c)).toEqual(['EnableCSI', 'EnableAPIGroupVersions']);
    expect(configNamespace({ namespace: '' })).toBeUndefined();
    expect(unusedKeys({ namespace: 'a', cacert: '/ca.pem', zzz: '1' })).toEqual(['cacert', 'zzz']);
  });

  it('set: validates every pair before changing anything; an empty value removes the key', () => {
    expect(applySet({ namespace: 'a', colorized: 'false' }, ['namespace=b', 'colorized='])).toEqual({ config: { namespace: 'b' }, warnings: [] });
    expect(applySet({}, ['features=EnableCSI']).warnings[0]).toMatch(/^features: .*changes nothing/);
    const bad = (args: string[]) => usageMessage(() => applySet({}, args));
    expect(bad([])).toMatch(/at least one KEY=VALUE/);
    expect(bad(['namespace'])).toMatch(/"namespace" is not KEY=VALUE/);
    expect(bad(['=x'])).toMatch(/not KEY=VALUE/);
    expect(bad(['colour=false'])).toMatch(/^colour: unknown key \(known: namespace, colorized, features\)/);
    expect(bad(['cacert=/ca.pem'])).toMatch(/^cacert: not supported/);
    expect(bad(['namespace=Not_A_Namespace'])).toMatch(/^namespace: .*not a valid namespace name/);
    expect(bad(['colorized=yes'])).toMatch(/^colorized: "yes" is not true or false/);
  });

  it('get: key: value lines, sorted; <NOT SET> for a named key that is not set', () => {
    expect(formatGet({ namespace: 'a', colorized: 'false' }, [])).toBe('colorized: false\nnamespace: a');
    expect(formatGet({ namespace: 'a' }, ['features', 'namespace'])).toBe('features: <NOT SET>\nnamespace: a');
    expect(formatGet({}, [])).toBe('');
  });

  it('load: no file is an empty config; a file that is not a JSON object is bad input naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-cc-'));
    try {
      const path = join(dir, 'cairn', 'config.json');
      expect(loadClientConfig(path)).toEqual({});
      saveClientConfig(path, { namespace: 'x' });
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(loadClientConfig(path)).toEqual({ namespace: 'x' });
      writeFileSync(path, '{not json');
      expect(() => loadClientConfig(path)).toThrow(new RegExp(`client config ${path} is not valid JSON`));
      writeFileSync(path, '["a"]');
      expect(() => loadClientConfig(path)).toThrow(/must hold a JSON object/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('colour is off when the config says colorized=false, even on a terminal', () => {
    expect(colourEnabled({ tty: true, env: {} })).toBe(true);
    expect(colourEnabled({ tty: true, env: {}, colorized: false })).toBe(false);
    expect(colourEnabled({ tty: true, env: {}, colorized: true, noColor: true })).toBe(false);
  });
});

/** Prints what every command resolves for the global flags. */
class Probe extends BaseCommand<typeof Probe> {
  async run(): Promise<void> {
    this.out(JSON.stringify({ namespace: this.flags.namespace, context: this.flags.context ?? null, colour: this.colourEnabled(false) }));
  }
}

describe('commands and the client config', () => {
  let dir: string;
  let saved: { xdg?: string | undefined; ns?: string | undefined };
  let stdout: string[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-cc-'));
    saved = { xdg: process.env.XDG_CONFIG_HOME, ns: process.env.CAIRN_NAMESPACE };
    process.env.XDG_CONFIG_HOME = dir;
    delete process.env.CAIRN_NAMESPACE;
    stdout = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    if (saved.xdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved.xdg;
    if (saved.ns === undefined) delete process.env.CAIRN_NAMESPACE;
    else process.env.CAIRN_NAMESPACE = saved.ns;
    rmSync(dir, { recursive: true, force: true });
  });

  const probe = async (argv: string[]) => {
    stdout = [];
    await Probe.run(argv, ROOT);
    return JSON.parse(stdout.join('')) as { namespace: string; context: string | null; colour: boolean };
  };

  it('set writes the file, get prints it; the namespace default follows: flag, $CAIRN_NAMESPACE, config, velero', async () => {
    expect((await probe([])).namespace).toBe('velero');
    await ClientConfigSet.run(['namespace=backup-system', 'colorized=false'], ROOT);
    expect(JSON.parse(readFileSync(join(dir, 'cairn', 'config.json'), 'utf8'))).toEqual({ namespace: 'backup-system', colorized: 'false' });
    stdout = [];
    await ClientConfigGet.run([], ROOT);
    expect(stdout.join('')).toBe('colorized: false\nnamespace: backup-system\n');
    expect((await probe([])).namespace).toBe('backup-system');
    process.env.CAIRN_NAMESPACE = 'from-env';
    expect((await probe([])).namespace).toBe('from-env');
    expect((await probe(['-n', 'from-flag'])).namespace).toBe('from-flag');
  });

  it('--kubecontext is --context', async () => {
    expect((await probe(['--kubecontext', 'kind-a'])).context).toBe('kind-a');
    expect((await probe(['--context', 'kind-b'])).context).toBe('kind-b');
  });

  it('a broken config file fails a command with exit 2, naming the file', async () => {
    mkdirSync(join(dir, 'cairn'));
    writeFileSync(join(dir, 'cairn', 'config.json'), '{');
    const stderr: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
    await expect(Probe.run([], ROOT)).rejects.toMatchObject({ oclif: { exit: 2 } });
    expect(stderr.join('')).toMatch(/error: client config .*config\.json is not valid JSON/);
  });
});
