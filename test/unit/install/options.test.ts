import { mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/base/errors.js';
import { parseInstallFlags, parseKeyValueList, type InstallFlags } from '../../../src/install/options.js';
import { expectThrown } from '../../support/thrown.js';

const dir = mkdtempSync(join(tmpdir(), 'cairn-install-'));
const creds = join(dir, 'credentials');
writeFileSync(creds, '[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = s3cr3t-value\n');

const base: InstallFlags = { namespace: 'velero', image: 'cairn/cairn:dev' };

const usageError = (flags: InstallFlags) => expectThrown(UsageError, () => parseInstallFlags(flags));

describe('install flags', () => {
  it('takes --privileged-node-agent only with --use-node-agent', () => {
    expect(parseInstallFlags({ ...base, 'use-node-agent': true }).privilegedNodeAgent).toBeUndefined();
    expect(parseInstallFlags({ ...base, 'use-node-agent': true, 'privileged-node-agent': true }).privilegedNodeAgent).toBe(true);
    expect(usageError({ ...base, 'privileged-node-agent': true }).message).toMatch(/--privileged-node-agent.*needs --use-node-agent/);
  });

  it('takes a restore scope of resource[.group] names, and refuses sub-resources and wildcards', () => {
    expect(parseInstallFlags(base).restoreScope).toBeUndefined();
    expect(parseInstallFlags({ ...base, 'restore-resources': 'deployments.apps, configmaps' }).restoreScope).toEqual([
      { group: 'apps', resource: 'deployments' },
      { group: '', resource: 'configmaps' },
    ]);
    for (const bad of ['pods/exec', '*', 'nodes', '']) {
      expect(() => parseInstallFlags({ ...base, 'restore-resources': bad })).toThrow(/--restore-resources/);
    }
  });

  it('takes the kubelet root directory as an absolute path, /var/lib/kubelet by default', () => {
    expect(parseInstallFlags(base).kubeletRootDir).toBe('/var/lib/kubelet');
    expect(parseInstallFlags({ ...base, 'kubelet-root-dir': '/var/lib/k0s/kubelet/' }).kubeletRootDir).toBe('/var/lib/k0s/kubelet');
    expect(usageError({ ...base, 'kubelet-root-dir': 'var/lib/kubelet' }).message).toMatch(/--kubelet-root-dir/);
    expect(usageError({ ...base, 'kubelet-root-dir': '/var/lib/../etc' }).message).toMatch(/absolute path/);
  });

  it('accepts a complete aws location', () => {
    const opts = parseInstallFlags({
      ...base,
      provider: 'aws',
      bucket: 'backups',
      prefix: '/cluster-a/',
      'backup-location-config': 'region=us-east-1, s3Url=http://127.0.0.1:9000,s3ForcePathStyle=true',
      'secret-file': creds,
      'use-node-agent': true,
    });
    expect(opts.storageLocation).toEqual({
      provider: 'aws',
      bucket: 'backups',
      prefix: 'cluster-a',
      config: { region: 'us-east-1', s3Url: 'http://127.0.0.1:9000', s3ForcePathStyle: 'true' },
    });
    expect(opts.credentials?.toString()).toContain('aws_access_key_id');
    expect(opts.useNodeAgent).toBe(true);
  });

  it('gives the filesystem provider a default root', () => {
    const opts = parseInstallFlags({ ...base, provider: 'filesystem', bucket: 'backups' });
    expect(opts.storageLocation?.config).toEqual({ root: '/var/lib/cairn/storage' });
  });

  it.each([
    [{ provider: 'gcp', bucket: 'b' }, '--provider', /"gcp" is not built in \(built in: aws, filesystem\); install the plugin that provides it with --plugins IMAGE/],
    [{ provider: 'aws', 'secret-file': creds }, '--bucket', /required with --provider aws/],
    [{ provider: 'aws', bucket: 'Bad_Bucket', 'secret-file': creds }, '--bucket', /not a valid S3 bucket name/],
    [{ provider: 'aws', bucket: 'b1b', 'backup-location-config': 'region', 'secret-file': creds }, '--backup-location-config', /expected key=value/],
    [{ provider: 'aws', bucket: 'b1b', 'backup-location-config': 'regoin=x', 'secret-file': creds }, '--backup-location-config', /unknown key "regoin"/],
    [{ provider: 'aws', bucket: 'b1b', 'backup-location-config': 's3ForcePathStyle=yes', 'secret-file': creds }, '--backup-location-config', /must be true or false/],
    [{ provider: 'aws', bucket: 'b1b', 'backup-location-config': 'region=a,region=b', 'secret-file': creds }, '--backup-location-config', /given twice/],
    [{ provider: 'aws', bucket: 'b1b', 'secret-file': join(dir, 'missing') }, '--secret-file', /cannot read .*missing: no such file/],
    [{ provider: 'aws', bucket: 'b1b' }, '--secret-file', /required with --provider aws/],
    [{ provider: 'filesystem', bucket: 'b', 'secret-file': creds }, '--secret-file', /takes no credentials/],
    [{ provider: 'filesystem', bucket: 'a/b' }, '--bucket', /single directory name/],
    [{ provider: 'filesystem', bucket: 'b', 'backup-location-config': 'root=relative/path' }, '--backup-location-config', /absolute path/],
    [{ bucket: 'b' }, '--bucket', /needs --provider/],
    [{ namespace: 'Not_Valid' }, '--namespace', /not a valid namespace name/],
  ] as [Partial<InstallFlags>, string, RegExp][])('rejects %j naming %s', (flags, flag, message) => {
    const err = usageError({ ...base, ...flags });
    expect(err.flag).toBe(flag);
    expect(err.message.startsWith(`${flag}: `)).toBe(true);
    expect(err.message).toMatch(message);
    expect(err.message.split('\n')).toHaveLength(1);
  });

  it('rejects a credentials file without keys and never echoes its content', () => {
    const bad = join(dir, 'bad');
    writeFileSync(bad, '[default]\naws_access_key_id = AKIASECRETVALUE\n');
    const err = usageError({ ...base, provider: 'aws', bucket: 'b1b', 'secret-file': bad });
    expect(err.message).toMatch(/no aws_secret_access_key/);
    expect(err.message).not.toContain('AKIASECRETVALUE');
    const garbage = join(dir, 'garbage');
    writeFileSync(garbage, 'password=hunter2\n');
    const err2 = usageError({ ...base, provider: 'aws', bucket: 'b1b', 'secret-file': garbage });
    expect(err2.message).toMatch(/not an AWS credentials file/);
    expect(err2.message).not.toContain('hunter2');
  });

  it('reports an unreadable secret file', () => {
    const locked = join(dir, 'locked');
    writeFileSync(locked, 'x');
    chmodSync(locked, 0o000);
    // root can read anything: only assert when the permission actually bites.
    if (process.getuid?.() !== 0) expect(usageError({ ...base, provider: 'aws', bucket: 'b1b', 'secret-file': locked }).message).toMatch(/permission denied/);
    expect(usageError({ ...base, provider: 'aws', bucket: 'b1b', 'secret-file': dir }).message).toMatch(/is a directory/);
  });

  it('parses key=value lists', () => {
    expect(parseKeyValueList('--x', 'a=1,b=two=2,, c = 3 ')).toEqual({ a: '1', b: 'two=2', c: '3' });
  });
});
