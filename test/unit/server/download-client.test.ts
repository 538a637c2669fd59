import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kube } from '../../../src/kube/client.js';
import { NotFoundError } from '../../../src/base/errors.js';
import { fetchDownload, type ServerFileRequest } from '../../../src/server/download/client.js';

/** Just enough of a Kube for fetchDownload: the server "processes" each DownloadRequest with `answer`. */
function fakeKube(answer: (name: string) => { downloadURL?: string } | 'never'): Kube {
  const created = new Map<string, object>();
  const custom = {
    createNamespacedCustomObject: async ({ body }: { body: { metadata: { name: string } } }) => {
      created.set(body.metadata.name, body);
      return body;
    },
    getNamespacedCustomObject: async ({ name }: { name: string }) => {
      const obj = created.get(name) as object;
      const a = answer(name);
      return a === 'never' ? obj : { ...obj, status: { phase: 'Processed', expiration: new Date(Date.now() + 600_000).toISOString(), ...a } };
    },
  };
  const core = {
    listNamespacedPod: async () => ({
      items: [
        {
          metadata: { name: 'cairn-abc-123', creationTimestamp: new Date() },
          spec: { containers: [{ name: 'cairn', ports: [{ name: 'health', containerPort: 8085 }] }] },
          status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
        },
      ],
    }),
  };
  return { custom, core, server: 'https://fake' } as unknown as Kube;
}

let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/ok') res.writeHead(200).end(gzipSync('direct\n'));
    else res.writeHead(403).end('SignatureDoesNotMatch');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('fetchDownload', () => {
  const viaServer = (calls: ServerFileRequest[]) => async (r: ServerFileRequest) => {
    calls.push(r);
    return gzipSync('through the server\n');
  };

  it('uses the signed URL when it works', async () => {
    const calls: ServerFileRequest[] = [];
    const out = await fetchDownload(fakeKube(() => ({ downloadURL: `${base}/ok` })), { namespace: 'velero', kind: 'BackupLog', name: 'b1', gunzip: true, serverTransport: viaServer(calls) });
    expect(out.toString()).toBe('direct\n');
    expect(calls).toEqual([]);
  });

  it('falls back to the server pod when the URL is refused, unreachable or not HTTP', async () => {
    for (const url of [`${base}/denied`, 'http://127.0.0.1:1/x', 'file:///nonexistent/cairn/b1-logs.gz']) {
      const calls: ServerFileRequest[] = [];
      const out = await fetchDownload(fakeKube(() => ({ downloadURL: url })), { namespace: 'velero', kind: 'BackupLog', name: 'b1', gunzip: true, serverTransport: viaServer(calls) });
      expect(out.toString()).toBe('through the server\n');
      expect(calls).toEqual([{ namespace: 'velero', pod: 'cairn-abc-123', port: 8085, path: expect.stringMatching(/^\/download\/b1-[0-9a-f-]{36}$/), timeoutMs: expect.any(Number) }]);
    }
  });

  it('says not found when the server found no file', async () => {
    const err = await fetchDownload(fakeKube(() => ({})), { namespace: 'velero', kind: 'RestoreResults', name: 'r1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe('RestoreResults of r1 not found in storage');
  });

  it('gives up with a clear message when no server processes the request', async () => {
    await expect(fetchDownload(fakeKube(() => 'never'), { namespace: 'velero', kind: 'BackupLog', name: 'b1', timeoutMs: 500 })).rejects.toThrow(
      /timed out waiting for the cairn server in namespace velero to process download request b1-.* \(is the server running\?\)/,
    );
  });
});
