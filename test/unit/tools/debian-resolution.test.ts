// apt's resolution of the test bed's Debian packages takes seconds of CPU, and every cluster start and image build
// asks for it: it is kept in the cache for the same package set while apt's state is the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { architecturesIn, candidatesIn, resolvedOnce, type PackageVersion } from '../../../tools/local-cluster/debian.js';

let cache: string;
const saved = process.env.CAIRN_CACHE_DIR;
beforeEach(() => {
  cache = mkdtempSync(join(tmpdir(), 'cairn-debian-'));
  process.env.CAIRN_CACHE_DIR = cache;
});
afterEach(() => {
  if (saved === undefined) delete process.env.CAIRN_CACHE_DIR;
  else process.env.CAIRN_CACHE_DIR = saved;
  rmSync(cache, { recursive: true, force: true });
});

describe("the test bed's Debian package resolution", () => {
  const runc: PackageVersion = { name: 'runc', version: '1.1.5+ds1-1', arch: 'amd64' };

  it('asks apt once per package set and apt state, whatever the order the packages are named in', async () => {
    const asked: string[][] = [];
    const resolve = (packages: readonly string[]) => {
      asked.push([...packages]);
      return Promise.resolve([runc]);
    };
    expect(await resolvedOnce(['runc', 'containerd'], resolve, 'state-1')).toEqual([runc]);
    expect(await resolvedOnce(['containerd', 'runc'], resolve, 'state-1')).toEqual([runc]);
    expect(asked).toEqual([['runc', 'containerd']]);
    // Another package set is resolved on its own.
    await resolvedOnce(['busybox-static'], resolve, 'state-1');
    expect(asked).toHaveLength(2);
  });

  it('asks again once apt state changed (a package installed or removed, the lists updated)', async () => {
    let calls = 0;
    const resolve = () => Promise.resolve(++calls === 1 ? [runc] : []);
    expect(await resolvedOnce(['runc'], resolve, 'before')).toEqual([runc]);
    expect(await resolvedOnce(['runc'], resolve, 'after')).toEqual([]);
    expect(await resolvedOnce(['runc'], resolve, 'after')).toEqual([]);
    expect(calls).toBe(2);
  });
});

describe("apt-cache's output for several packages at once", () => {
  it("reads each package's candidate from `apt-cache policy`", () => {
    const policy = [
      'tini:', '  Installed: (none)', '  Candidate: 0.19.0-1+b3', '  Version table:', '     0.19.0-1+b3 500',
      'busybox-static:', '  Installed: (none)', '  Candidate: 1:1.35.0-4+deb12u1+b1', '  Version table:',
      'gone:', '  Installed: (none)', '  Candidate: (none)', '',
    ].join('\n');
    expect(candidatesIn(policy)).toEqual(new Map([['tini', '0.19.0-1+b3'], ['busybox-static', '1:1.35.0-4+deb12u1+b1'], ['gone', '(none)']]));
  });

  it('reads the architecture of each name=version record of `apt-cache show`', () => {
    const records = 'Package: tini\nVersion: 0.19.0-1+b3\nArchitecture: amd64\nDescription: x\n\nPackage: gcc-12-base\nVersion: 12.2.0-14\nArchitecture: all\n';
    expect(architecturesIn(records)).toEqual(new Map([['tini=0.19.0-1+b3', 'amd64'], ['gcc-12-base=12.2.0-14', 'all']]));
  });
});
