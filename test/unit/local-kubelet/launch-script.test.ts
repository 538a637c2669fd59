import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { containerPrivileges } from '../../../tools/local-cluster/kubelet/container-config.js';
import { buildLaunchScript, shellQuote } from '../../../tools/local-cluster/kubelet/launch-script.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('launch script', () => {
  it('quotes anything for sh', async () => {
    for (const s of ["it's", '$(rm -rf /)', '"a b"', '\\n', '']) {
      const { stdout } = await run('sh', ['-c', `printf %s ${shellQuote(s)}`]);
      expect(stdout).toBe(s);
    }
  });

  it('mounts volumes, drops privileges, enters workingDir and records the exit code', () => {
    const script = buildLaunchScript({
      argv: ['sh', '-c', 'echo $0'],
      mounts: [
        { source: '/node/vol', target: '/data', readOnly: false, sourceIsFile: false },
        { source: '/node/secret', target: '/etc/s', readOnly: true, sourceIsFile: false },
        { source: '/node/term', target: '/dev/termination-log', readOnly: false, sourceIsFile: true },
      ],
      workingDir: '/work dir',
      runAsUser: 1000,
      runAsGroup: 2000,
      supplementalGroups: [3000],
      exitCodeFile: '/node/exit',
    });
    expect(script).toContain("mount --rbind '/node/vol' '/data'");
    expect(script).toContain("mount -o remount,bind,ro '/etc/s'");
    expect(script).not.toContain("remount,bind,ro '/data'");
    expect(script).toContain(": > '/dev/termination-log'");
    expect(script).toContain("cd '/work dir'");
    expect(script).toContain("setpriv --reuid=1000 --regid=2000 --groups=3000 -- 'sh' '-c' 'echo $0'");
    expect(script).toContain(`echo "$code" > '/node/exit'`);
  });

  it('takes a container\'s capabilities and no_new_privs from its securityContext (none taken from a privileged one)', () => {
    expect(containerPrivileges({ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['DAC_READ_SEARCH'] } } })).toEqual({ capabilities: ['dac_read_search'], noNewPrivs: true });
    expect(containerPrivileges({ name: 'c', securityContext: { privileged: true, capabilities: { drop: ['ALL'] } } })).toEqual({});
    expect(containerPrivileges({ name: 'c' })).toEqual({});
  });

  // setpriv changes the bounding set only with CAP_SETPCAP: as root, as the stand-in's kubelet runs.
  it.runIf(process.getuid?.() === 0)('runs a container as root with only the capabilities it keeps, and no_new_privs, as a real runtime does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'launch-'));
    dirs.push(dir);
    const script = join(dir, 'run.sh');
    await writeFile(script, buildLaunchScript({ argv: ['sh', '-c', 'grep -E "^(CapEff|NoNewPrivs):" /proc/self/status'], mounts: [], runAsUser: 0, capabilities: ['dac_read_search'], noNewPrivs: true, exitCodeFile: join(dir, 'exit') }));
    const { stdout } = await run('sh', [script]);
    // DAC_READ_SEARCH is capability 2.
    expect(stdout).toBe('CapEff:\t0000000000000004\nNoNewPrivs:\t1\n');
  });

  it('runs the command and writes its exit status (no mounts needed)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'launch-'));
    dirs.push(dir);
    const exitFile = join(dir, 'exit');
    const script = join(dir, 'run.sh');
    await writeFile(script, buildLaunchScript({ argv: ['sh', '-c', 'pwd; exit 7'], mounts: [], workingDir: join(dir, 'wd'), exitCodeFile: exitFile }));
    const err = await run('sh', [script]).catch((e: unknown) => e as { code: number; stdout: string });
    expect(err).toMatchObject({ code: 7, stdout: `${join(dir, 'wd')}\n` });
    expect((await readFile(exitFile, 'utf8')).trim()).toBe('7');
  });
});
