/**
 * Velero's plugin protocol against real plugin binaries, built from the Go module proxy and run unchanged:
 * Velero's AWS plugin (its object store against the test bed's MinIO, through cairn's object-store conformance
 * suite), Velero's GCP plugin (loads, registers, fails with Google's own error: no cloud is reachable here) and
 * the test bed's plugins written against Velero's framework (every kind; a crash mid-call). The server-side
 * wiring (backups and restores through plugins) is in test/e2e/plugins.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/base/logger.js';
import {
  ExternalPlugins,
  ObjectStorePluginClient,
  PluginExitedError,
  PluginObjectStore,
  VolumeSnapshotterPluginClient,
  externalBackupItemAction,
  type PluginSession,
} from '../../src/plugins/external/index.js';
import { ensureToolBinary } from '../../tools/local-cluster/toolchain.js';
import { objectStoreConformance } from '../unit/object-store/conformance.js';
import { clusterInfo } from '../support/cluster.js';
import type { Backup } from '../../src/api/index.js';

const log = createLogger({ level: 'warn' });
const say = (line: string) => process.stderr.write(`[plugins] ${line}\n`);
let dir: string;
let plugins: ExternalPlugins;
const sessions: PluginSession[] = [];
const session = () => {
  const s = plugins.session({ logs: [log] });
  sessions.push(s);
  return s;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cairn-plugin-dir-'));
  // One at a time: Go builds are slow on a shared machine, and each is cached after its first run.
  for (const [key, name] of [['veleroPluginForAws', 'velero-plugin-for-aws'], ['veleroPluginForGcp', 'velero-plugin-for-gcp'], ['cairnTestPlugins', 'cairn-test-plugins']] as const) {
    copyFileSync(await ensureToolBinary(key, say), join(dir, name));
  }
  plugins = await ExternalPlugins.discover(dir, { log, callTimeoutMs: 60_000, args: ['--log-level=info'] });
}, 60 * 60_000);

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('Velero plugin binaries', () => {
  it('are listed the way Velero server lists them at start', () => {
    const listed = plugins.plugins.map((p) => `${p.kind} ${p.name} ${p.command.slice(dir.length + 1)}`);
    expect(listed).toEqual([
      'BackupItemAction example.cairn.io/annotate cairn-test-plugins',
      'BackupItemActionV2 example.cairn.io/async cairn-test-plugins',
      'VolumeSnapshotter example.cairn.io/none cairn-test-plugins',
      'ObjectStore example.cairn.io/directory cairn-test-plugins',
      'RestoreItemAction example.cairn.io/annotate cairn-test-plugins',
      'RestoreItemActionV2 example.cairn.io/skip cairn-test-plugins',
      'DeleteItemAction example.cairn.io/record-delete cairn-test-plugins',
      'ItemBlockAction example.cairn.io/group cairn-test-plugins',
      'VolumeSnapshotter velero.io/aws velero-plugin-for-aws',
      'ObjectStore velero.io/aws velero-plugin-for-aws',
      'VolumeSnapshotter velero.io/gcp velero-plugin-for-gcp',
      'ObjectStore velero.io/gcp velero-plugin-for-gcp',
    ]);
  });
});

describe('Velero AWS plugin object store against MinIO', () => {
  const { s3 } = clusterInfo();
  const creds = join(mkdtempSync(join(tmpdir(), 'cairn-aws-')), 'credentials');
  writeFileSync(creds, `[default]\naws_access_key_id = ${s3.accessKeyId}\naws_secret_access_key = ${s3.secretAccessKey}\n`, { mode: 0o600 });
  const open = async (prefix: string) => {
    const client = new ObjectStorePluginClient(session(), plugins.find('ObjectStore', 'velero.io/aws')!);
    await client.init({ region: s3.region, s3Url: s3.endpoint, s3ForcePathStyle: 'true', bucket: s3.bucket, prefix, credentialsFile: creds });
    return new PluginObjectStore({ client, bucket: s3.bucket, prefix });
  };

  objectStoreConformance(() => open(`plugin-aws-${randomBytes(6).toString('hex')}`), { sizes: false });

  it('signs download URLs that MinIO serves', async () => {
    const store = await open(`plugin-aws-url-${randomBytes(4).toString('hex')}`);
    await store.put('backups/b1/b1-logs.gz', Buffer.from('log bytes'));
    const url = await store.signedUrl('backups/b1/b1-logs.gz', { method: 'GET', expiresSeconds: 600 });
    expect(url).toMatch(/X-Amz-Signature=/);
    expect(await (await fetch(url!)).text()).toBe('log bytes');
  });

  it('fails Init with the plugin own words for a config key it does not know', async () => {
    const client = new ObjectStorePluginClient(session(), plugins.find('ObjectStore', 'velero.io/aws')!);
    await expect(client.init({ bucket: s3.bucket, region: s3.region, colour: 'blue' })).rejects.toThrow(/colour/);
  });
});

describe('Velero GCP plugin', () => {
  it('loads and registers, then fails with Google own error when no cloud is reachable', async () => {
    const account = join(mkdtempSync(join(tmpdir(), 'cairn-gcp-')), 'sa.json');
    // A syntactically valid service account whose key cannot sign anything Google would accept.
    writeFileSync(account, JSON.stringify({ type: 'service_account', project_id: 'cairn-test', client_email: 'test@cairn-test.iam.gserviceaccount.com', private_key_id: '0', private_key: '', token_uri: 'https://oauth2.googleapis.com/token' }));
    const client = new ObjectStorePluginClient(session(), plugins.find('ObjectStore', 'velero.io/gcp')!);
    const store = new PluginObjectStore({ client, bucket: 'cairn-test-bucket' });
    let error: Error | undefined;
    try {
      await client.init({ bucket: 'cairn-test-bucket', prefix: '', credentialsFile: account });
      await store.put('probe', Buffer.from('x'));
    } catch (err) {
      error = err as Error;
    }
    say(`GCP plugin said: ${error?.message}`);
    expect(error?.message).toMatch(/google|oauth2|googleapis|credentials|private key/i);
  });
});

describe('the test bed plugins (Velero framework)', () => {
  const backup = { apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name: 'b1', namespace: 'velero', uid: 'u1' }, spec: {} } as unknown as Backup;
  const cm = (labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', labels } });

  it('fail the item in flight when the plugin dies, with its panic, and serve the next after a restart', async () => {
    const s = session();
    const action = await externalBackupItemAction(s, plugins.find('BackupItemAction', 'example.cairn.io/annotate')!);
    const ctx = { backup, kube: undefined as never, log };
    const crash = action.execute(cm({ 'example.cairn.io/crash': 'true' }), ctx);
    await expect(crash).rejects.toThrow(PluginExitedError);
    await expect(crash).rejects.toThrow(/exited during BackupItemAction.Execute \(exit code 2\): panic: crashing on purpose while backing up ns\/c/);
    const next = await action.execute(cm({}), ctx);
    expect(next.item.metadata.annotations?.['example.cairn.io/backed-up-by']).toBe('example.cairn.io/annotate in backup b1');
  });

  it('answer a volume snapshotter call with the plugin error', async () => {
    const client = new VolumeSnapshotterPluginClient(session(), plugins.find('VolumeSnapshotter', 'example.cairn.io/none')!);
    await client.init({});
    await expect(client.createSnapshot('vol-1', 'zone-a', {})).rejects.toThrow('example.cairn.io/none has no volumes to snapshot');
  });
});
