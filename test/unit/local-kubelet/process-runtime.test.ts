/**
 * The process side of a "container" on this machine (needs root, like the whole test bed): a private mount
 * namespace with the volume bind-mounted, the exit status recorded, the whole process group stopped, and a
 * run adopted by a later kubelet.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  adoptProcess,
  groupAlive,
  killGroup,
  readExitCode,
  readRunRecord,
  startProcess,
} from '../../../tools/local-cluster/kubelet/process-runtime.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function sandbox() {
  const root = await mkdtemp(join(tmpdir(), 'lk-proc-'));
  dirs.push(root);
  const paths = {
    root,
    logFile: join(root, 'log/0.log'),
    terminationLogFile: join(root, 'term/0'),
    runtimeDir: join(root, 'rt'),
    pidFile: join(root, 'pids/uid_c'),
  };
  return paths;
}

/** Signals sent before the command runs are taken by the launch script, so wait until it says it runs. */
async function started(logFile: string): Promise<void> {
  await expect.poll(() => readFile(logFile, 'utf8').catch(() => ''), { timeout: 10_000 }).toContain('ready');
}

const env = () => new Map([['PATH', process.env.PATH ?? '/usr/bin:/bin']]);

describe('container processes', () => {
  it('bind-mounts volumes only inside the container and records output, exit code and termination message', async () => {
    const p = await sandbox();
    const vol = join(p.root, 'vol');
    await mkdir(vol);
    await writeFile(join(vol, 'hello'), 'from the volume\n');
    const target = join(p.root, 'mnt-inside'); // a path that exists only as an empty mount point outside
    const run = await startProcess({
      ...p,
      restartCount: 0,
      env: env(),
      launch: {
        argv: ['sh', '-c', `cat ${target}/hello; echo -n "bye" > /dev/termination-log; echo oops >&2; exit 3`],
        mounts: [
          { source: vol, target, readOnly: true, sourceIsFile: false },
          { source: p.terminationLogFile, target: '/dev/termination-log', readOnly: false, sourceIsFile: true },
        ],
      },
    });
    expect(Number((await readFile(p.pidFile, 'utf8')).trim())).toBe(run.pid);
    expect(await run.exited).toEqual({ exitCode: 3 });
    expect(await readFile(p.logFile, 'utf8')).toBe('from the volume\noops\n');
    expect(await readFile(p.terminationLogFile, 'utf8')).toBe('bye');
    expect(await readExitCode(p.runtimeDir, 0)).toBe(3);
    expect(existsSync(join(target, 'hello'))).toBe(false);
  });

  it('stops the whole process group and reports 143 for SIGTERM', async () => {
    const p = await sandbox();
    const run = await startProcess({ ...p, restartCount: 0, env: env(), launch: { argv: ['sh', '-c', 'sleep 60 & echo ready; sleep 60'], mounts: [] } });
    await started(p.logFile);
    killGroup(run.pid, 'SIGTERM');
    expect((await run.exited).exitCode).toBe(143);
    expect(groupAlive(run.pid)).toBe(false);
  });

  it('adopts a run started earlier and sees it end', async () => {
    const p = await sandbox();
    const run = await startProcess({ ...p, restartCount: 0, env: env(), launch: { argv: ['sh', '-c', 'echo ready; exec sleep 60'], mounts: [] } });
    await started(p.logFile);
    const record = await readRunRecord(p.runtimeDir, 0);
    if (!record) throw new Error('no run record');
    const adopted = await adoptProcess({ record, runtimeDir: p.runtimeDir, pollMs: 20 });
    expect(adopted?.pid).toBe(run.pid);
    killGroup(run.pid, 'SIGTERM');
    expect((await adopted?.exited)?.exitCode).toBe(143);
    expect(await adoptProcess({ record, runtimeDir: p.runtimeDir })).toBeUndefined();
  });
});
