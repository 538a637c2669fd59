/**
 * The peer install scripts (tools/peers/install-*.sh) build a tool once into ~/.cache/cairn/bin. On a cold cache the
 * integration and e2e tiers, which run side by side, may ask for the same tool at once: both must end with the tool,
 * built once. A fake build (a script that sources go-module.sh and "builds" slowly) stands in for `go build`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const GO_MODULE_SH = resolve(import.meta.dirname, '../../../tools/peers/go-module.sh');

const FAKE_INSTALL = `
set -euo pipefail
source "$GO_MODULE_SH"
peer_begin install-fake fake v1
echo build >> "$CAIRN_CACHE/builds"
sleep 0.5
printf '#!/bin/sh\\n' > "$BIN_DIR/fake.tmp"
chmod +x "$BIN_DIR/fake.tmp"
mv "$BIN_DIR/fake.tmp" "$BIN_DIR/fake"
echo "$BIN_DIR/fake"
`;

const cache = mkdtempSync(join(tmpdir(), 'cairn-peer-lock-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

describe('peer tool builds', () => {
  it('build a tool once when two callers ask for it at the same time; both get its path', async () => {
    const env = { ...process.env, CAIRN_CACHE: cache, GO: '/bin/true', GO_MODULE_SH };
    const [a, b] = await Promise.all([run('bash', ['-c', FAKE_INSTALL], { env }), run('bash', ['-c', FAKE_INSTALL], { env })]);
    const tool = join(cache, 'bin', 'fake-v1', 'fake');
    expect(a.stdout.trim()).toBe(tool);
    expect(b.stdout.trim()).toBe(tool);
    expect(readFileSync(join(cache, 'builds'), 'utf8')).toBe('build\n');
  });
});
