// The entry point works for a user ID with no /etc/passwd entry and no $SHELL, as in a container whose pod spec
// picks a runAsUser the image does not list (the restore helper runs as 1000; OpenShift assigns random IDs).
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const RUN_JS = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));

describe('bin/run.js', () => {
  it('starts as a user ID without a passwd entry and without $SHELL', async () => {
    const uid = '48213';
    const { stdout } = await exec('setpriv', ['--reuid', uid, '--regid', uid, '--clear-groups', process.execPath, RUN_JS, '--version'], {
      env: { PATH: '/usr/bin:/bin', HOME: '/tmp' },
    });
    expect(stdout).toMatch(/^cairn\/\d+\.\d+\.\d+/);
  });

  it('ends quietly with 141 (as SIGPIPE would) when the reader closes the pipe early (`cairn --help | head -1`)', async () => {
    const child = spawn(process.execPath, [RUN_JS, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Our end is closed before cairn writes (it takes a few hundred milliseconds to start), as `head -1` closes it
    // before cairn's next write. Closing it after the first chunk instead was a race: on a busy machine cairn could
    // write all of its help into the pipe's buffer before the reader closed, and then end with 0.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(stderr).not.toContain('unsettled');
    expect(code).toBe(141);
  });
});
