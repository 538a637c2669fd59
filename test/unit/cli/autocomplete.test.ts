// Shell completion comes from oclif's autocomplete plugin, declared in package.json: the CLI's configuration loads it
// and finds its commands beside cairn's own.
import { fileURLToPath } from 'node:url';
import { Config } from '@oclif/core';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('autocomplete plugin', () => {
  it('is loaded with the CLI and offers autocomplete and autocomplete script', async () => {
    const config = await Config.load(ROOT);
    expect(config.plugins.has('@oclif/plugin-autocomplete')).toBe(true);
    expect(config.findCommand('autocomplete')).toBeDefined();
    expect(config.findCommand('autocomplete:script')).toBeDefined();
  });
});
