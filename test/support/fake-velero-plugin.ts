/**
 * A small stand-in for a Velero plugin binary, for unit tests of the host side: it checks the magic cookie, serves
 * PluginLister, a BackupItemAction (v1 and v2) and an in-memory ObjectStore over gRPC on a unix socket with the
 * vendored protocol definitions, prints go-plugin's handshake line, and logs JSON lines to stderr as Velero's
 * framework does. What it does with an item is chosen by the item's labels:
 *   fake/crash=true   exits at once (exit code 3) after a last line on stderr
 *   fake/fail=true    answers with an error
 *   fake/sleep=<ms>   answers after that long
 * Real plugins (Velero's AWS plugin, the test bed's Go plugins) are exercised by the cluster tier.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { protoRoot } from '../../src/plugins/external/proto.js';

type Handler = (call: { request: Record<string, unknown> }, cb: (err: grpc.ServiceError | null, res?: unknown) => void) => void;

if (process.env.VELERO_PLUGIN !== 'hello') {
  process.stderr.write('This binary is a plugin. These are not meant to be executed directly.\n');
  process.exit(1);
}

const log = (level: string, message: string, fields: Record<string, unknown> = {}) =>
  process.stderr.write(`${JSON.stringify({ '@level': level, '@message': message, ...fields })}\n`);

const opts: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
const velero = grpc.loadPackageDefinition(
  protoLoader.loadSync(['PluginLister.proto', 'ObjectStore.proto', 'BackupItemAction.proto', 'backupitemaction/v2/BackupItemAction.proto'], {
    ...opts,
    includeDirs: [join(protoRoot(), 'velero')],
  }),
) as unknown as { generated: Record<string, grpc.ServiceClientConstructor>; v2: Record<string, grpc.ServiceClientConstructor> };
const host = grpc.loadPackageDefinition(protoLoader.loadSync(['grpc_controller.proto'], { ...opts, includeDirs: [join(protoRoot(), 'go-plugin')] })) as unknown as {
  plugin: Record<string, grpc.ServiceClientConstructor>;
};

const objects = new Map<string, Buffer>();
const server = new grpc.Server();

function labelsOf(item: Buffer): Record<string, string> {
  return (JSON.parse(item.toString('utf8')) as { metadata?: { labels?: Record<string, string> } }).metadata?.labels ?? {};
}

const execute: Handler = (call, cb) => {
  const item = call.request.item as Buffer;
  const labels = labelsOf(item);
  if (labels['fake/crash'] === 'true') {
    process.stderr.write('panic: crashing on purpose\n');
    process.exit(3);
  }
  if (labels['fake/fail'] === 'true') return cb({ code: grpc.status.UNKNOWN, details: 'refusing this item', message: 'refusing this item', name: 'Error', metadata: new grpc.Metadata() });
  const obj = JSON.parse(item.toString('utf8')) as { metadata: { annotations?: Record<string, string> } };
  obj.metadata.annotations = { ...obj.metadata.annotations, 'fake/seen-by': String(call.request.plugin) };
  log('info', 'executing', { item: 'seen' });
  const answer = () => cb(null, { item: Buffer.from(JSON.stringify(obj)), additionalItems: [{ group: 'apps', resource: 'deployments', namespace: 'ns', name: 'web' }], operationID: labels['fake/async'] ? 'op-1' : '' });
  const sleep = Number(labels['fake/sleep'] ?? 0);
  if (sleep) setTimeout(answer, sleep);
  else answer();
};

const ok = (res: unknown = {}): Handler => (_call, cb) => cb(null, res);

server.addService(velero.generated.PluginLister!.service, {
  ListPlugins: ok({
    plugins: [
      { command: process.argv[1], kind: 'BackupItemAction', name: 'fake.cairn.io/annotate' },
      { command: process.argv[1], kind: 'BackupItemActionV2', name: 'fake.cairn.io/async' },
      { command: process.argv[1], kind: 'ObjectStore', name: 'fake.cairn.io/memory' },
    ],
  }),
});
server.addService(velero.generated.BackupItemAction!.service, {
  AppliesTo: ok({ ResourceSelector: { includedResources: ['configmaps'], includedNamespaces: [], excludedNamespaces: [], excludedResources: [], selector: '' } }),
  Execute: execute,
});
let progressCalls = 0;
server.addService(velero.v2.BackupItemAction!.service, {
  AppliesTo: ok({ ResourceSelector: { includedResources: [], selector: 'fake/async' } }),
  Execute: execute,
  Progress: (_call: unknown, cb: (e: null, r: unknown) => void) => {
    progressCalls++;
    cb(null, { progress: { completed: progressCalls >= 2, nCompleted: String(progressCalls), nTotal: '2', operationUnits: 'steps', description: 'stepping', started: { seconds: '1700000000', nanos: 0 } } });
  },
  Cancel: (call: { request: { operationID: string } }, cb: (e: null, r: unknown) => void) => {
    log('info', 'cancel received', { operationID: call.request.operationID });
    cb(null, {});
  },
});
server.addService(velero.generated.ObjectStore!.service, {
  Init: (call: { request: { config: Record<string, string> } }, cb: (e: grpc.ServiceError | null, r?: unknown) => void) => {
    if (call.request.config.fail) return cb({ code: grpc.status.UNKNOWN, details: 'config fail is set', message: '', name: 'Error', metadata: new grpc.Metadata() });
    log('info', 'initialised', { keys: Object.keys(call.request.config).sort().join(',') });
    cb(null, {});
  },
  PutObject: (call: grpc.ServerReadableStream<{ bucket: string; key: string; body: Buffer }, unknown>, cb: (e: null, r: unknown) => void) => {
    const parts: Buffer[] = [];
    let key = '';
    call.on('data', (m: { bucket: string; key: string; body: Buffer }) => {
      key = `${m.bucket}/${m.key}`;
      parts.push(m.body);
    });
    call.on('end', () => {
      objects.set(key, Buffer.concat(parts));
      cb(null, {});
    });
  },
  ObjectExists: (call: { request: { bucket: string; key: string } }, cb: (e: null, r: unknown) => void) => cb(null, { exists: objects.has(`${call.request.bucket}/${call.request.key}`) }),
  GetObject: (call: grpc.ServerWritableStream<{ bucket: string; key: string }, unknown>) => {
    const body = objects.get(`${call.request.bucket}/${call.request.key}`);
    if (!body) {
      call.emit('error', { code: grpc.status.UNKNOWN, details: 'NoSuchKey: the key does not exist' });
      return;
    }
    // Tiny messages for small objects (the host must join them), 64 KiB ones for large.
    const size = body.length < 100 ? 3 : 65536;
    for (let at = 0; at < body.length; at += size) call.write({ data: body.subarray(at, at + size) });
    call.end();
  },
  ListObjects: (call: { request: { bucket: string; prefix: string } }, cb: (e: null, r: unknown) => void) => {
    const p = `${call.request.bucket}/${call.request.prefix}`;
    cb(null, { keys: [...objects.keys()].filter((k) => k.startsWith(p)).map((k) => k.slice(call.request.bucket.length + 1)) });
  },
  ListCommonPrefixes: (call: { request: { bucket: string; prefix: string; delimiter: string } }, cb: (e: null, r: unknown) => void) => {
    const { bucket, prefix, delimiter } = call.request;
    const found = new Set<string>();
    for (const k of objects.keys()) {
      if (!k.startsWith(`${bucket}/${prefix}`)) continue;
      const rest = k.slice(bucket.length + 1 + prefix.length);
      const i = rest.indexOf(delimiter);
      if (i >= 0) found.add(prefix + rest.slice(0, i + delimiter.length));
    }
    cb(null, { prefixes: [...found] });
  },
  DeleteObject: (call: { request: { bucket: string; key: string } }, cb: (e: null, r: unknown) => void) => {
    objects.delete(`${call.request.bucket}/${call.request.key}`);
    cb(null, {});
  },
  CreateSignedURL: (call: { request: { key: string; ttl: string } }, cb: (e: null, r: unknown) => void) => cb(null, { url: `https://signed.example/${call.request.key}?ttl=${call.request.ttl}` }),
});
server.addService(host.plugin.GRPCController!.service, {
  Shutdown: (_call: unknown, cb: (e: null, r: unknown) => void) => {
    cb(null, {});
    setTimeout(() => process.exit(0), 10);
  },
});

const socket = join(mkdtempSync(join(tmpdir(), 'fake-plugin-')), 'plugin.sock');
server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
  log('debug', 'plugin address', { network: 'unix', address: socket });
  process.stdout.write(`1|2|unix|${socket}|grpc|\n`);
});
