import { describe, expect, it } from 'vitest';
import { exitStatus, parseExecRequest } from '../../../tools/local-cluster/kubelet/exec-server.js';

describe('exec endpoint', () => {
  it('reads the request the API server forwards (input/output/error) and the client names (stdin/stdout/stderr)', () => {
    const fromApi = parseExecRequest(new URL('https://k/exec/ns1/pod-a/app?command=sh&command=-c&command=echo%20hi&input=1&output=1&error=1'));
    expect(fromApi).toEqual({ namespace: 'ns1', pod: 'pod-a', container: 'app', command: ['sh', '-c', 'echo hi'], stdin: true, stdout: true, stderr: true, tty: false });
    const fromClient = parseExecRequest(new URL('https://k/exec/ns1/pod-a/app?command=ls&stdout=true&tty=true'));
    expect(fromClient).toMatchObject({ stdin: false, stdout: true, stderr: false, tty: true });
    expect(parseExecRequest(new URL('https://k/attach/ns1/pod-a/app'))).toBeUndefined();
  });

  it('reports the exit status as the kubelet does', () => {
    expect(exitStatus(0, ['true'])).toEqual({ metadata: {}, status: 'Success' });
    expect(exitStatus(3, ['sh', '-c', 'exit 3'])).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
  });
});
