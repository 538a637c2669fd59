import { describe, expect, it } from 'vitest';
import { lastLines } from '../../../tools/local-cluster/kubelet/log-files.js';
import { parseLogQuery } from '../../../tools/local-cluster/kubelet/log-server.js';
import { parseMountPoints } from '../../../tools/local-cluster/kubelet/mounts.js';
import { apiServerAddress, parseKubeletArgs } from '../../../tools/local-cluster/kubelet/args.js';

describe('log helpers', () => {
  it('takes the last n lines', () => {
    expect(lastLines('a\nb\nc\n', 2)).toBe('b\nc\n');
    expect(lastLines('a\nb\nc', 1)).toBe('c');
    expect(lastLines('a\n', 5)).toBe('a\n');
    expect(lastLines('', 3)).toBe('');
    expect(lastLines('a\nb\n', 0)).toBe('');
  });

  it('parses the containerLogs query', () => {
    expect(parseLogQuery(new URLSearchParams('follow=true&tailLines=10&limitBytes=5&previous=false'))).toEqual({
      follow: true,
      previous: false,
      tailLines: 10,
      limitBytes: 5,
    });
    expect(parseLogQuery(new URLSearchParams(''))).toEqual({ follow: false, previous: false, tailLines: undefined, limitBytes: undefined });
  });

  it('decodes mount points from mountinfo', () => {
    const info = '36 35 98:0 / /mnt/a\\040b rw,noatime master:1 - ext3 /dev/root rw\n37 35 98:0 / / rw - ext4 /dev/vda rw\n';
    expect(parseMountPoints(info)).toEqual(['/mnt/a b', '/']);
  });
});

describe('kubelet flags', () => {
  const argv = [
    '--kubeconfig', 'k', '--node-name', 'local-node-1', '--node-ip', '127.0.0.2', '--root-dir', '/r', '--port', '10250',
    '--tls-cert-file', 'c', '--tls-key-file', 'k', '--ca-file', 'ca', '--api-server', 'https://127.0.0.1:6443', '--log-file', 'l',
  ];
  it('parses the fixed interface', () => {
    const a = parseKubeletArgs(argv);
    expect(a).toMatchObject({ nodeName: 'local-node-1', nodeIp: '127.0.0.2', port: 10250, backoffInitialMs: 1000, backoffMaxMs: 30000 });
    expect(apiServerAddress(a.apiServer)).toEqual({ host: '127.0.0.1', port: 6443 });
  });
  it('names a missing flag', () => {
    expect(() => parseKubeletArgs(argv.slice(2))).toThrow(/--kubeconfig is required/);
  });
});
