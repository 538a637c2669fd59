/**
 * The host side of Velero's plugin protocol against a fake plugin process (test/support/fake-velero-plugin.ts):
 * discovery, calls, logs, a crash mid-call, restart with Init replayed, time limits, and the object-store adapter.
 */
import { mkdtempSync, copyFileSync, chmodSync, writeFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/base/logger.js';
import { discoverPlugins, findPluginBinaries } from '../../../../src/plugins/external/discovery.js';
import { PluginCallError, PluginExitedError, PluginStartError, PluginTimeoutError } from '../../../../src/plugins/external/errors.js';
import { externalBackupItemAction } from '../../../../src/plugins/external/item-actions.js';
import { ObjectStorePluginClient, PluginObjectStore } from '../../../../src/plugins/external/object-store.js';
import { ExternalPlugins, type PluginSession } from '../../../../src/plugins/external/session.js';
import { PluginProcess } from '../../../../src/plugins/external/process.js';
import { ObjectNotFoundError } from '../../../../src/plugins/object-store/errors.js';
import type { Backup } from '../../../../src/api/index.js';

const FAKE = fileURLToPath(new URL('../../../support/fake-velero-plugin', import.meta.url));

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'debug', format: 'json', destination: sink }), lines };
}

const backup = { apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name: 'b1', namespace: 'velero' }, spec: {} } as unknown as Backup;
/** What an item action is called with: the backup, no cluster, a quiet log. */
const ctx = { backup, kube: undefined as never, log: createLogger({ level: 'fatal' }) };
const cm = (labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', labels } });

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const i of items) out.push(i);
  return out;
}

let sessions: PluginSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  sessions = [];
});

async function pluginsIn(dir: string, callTimeoutMs = 30_000) {
  const { log, lines } = capture();
  const plugins = await ExternalPlugins.discover(dir, { log, callTimeoutMs });
  const session = plugins.session({ logs: [log] });
  sessions.push(session);
  return { plugins, session, lines };
}

function pluginDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-plugins-'));
  symlinkSync(FAKE, join(dir, 'fake-plugin'));
  return dir;
}

describe('plugin discovery', () => {
  it('lists the plugins of each executable under the directory and skips other files', async () => {
    const dir = pluginDir();
    writeFileSync(join(dir, 'README'), 'not a plugin');
    const { log, lines } = capture();
    expect(await findPluginBinaries(dir, log)).toEqual([join(dir, 'fake-plugin')]);
    expect(lines.some((l) => l.msg === 'Skipping file in the plugin directory: it is not executable')).toBe(true);
    const found = await discoverPlugins(dir, { log, callTimeoutMs: 30_000 });
    expect(found.map((p) => `${p.kind} ${p.name}`)).toEqual(['BackupItemAction fake.cairn.io/annotate', 'BackupItemActionV2 fake.cairn.io/async', 'ObjectStore fake.cairn.io/memory']);
    expect(found[0]?.command).toBe(join(dir, 'fake-plugin'));
  });

  it('refuses two binaries registering the same kind and name, naming both', async () => {
    const dir = pluginDir();
    symlinkSync(FAKE, join(dir, 'second'));
    const { log } = capture();
    await expect(discoverPlugins(dir, { log, callTimeoutMs: 30_000 })).rejects.toThrow(/another plugin is already registered for this kind and name/);
  });

  it('says what a binary that is not a plugin printed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-plugins-'));
    copyFileSync('/bin/true', join(dir, 'true'));
    chmodSync(join(dir, 'true'), 0o755);
    const { log } = capture();
    await expect(discoverPlugins(dir, { log, callTimeoutMs: 5000 })).rejects.toThrow(PluginStartError);
    await expect(PluginProcess.start({ command: '/nonexistent/plugin', onLog: () => undefined })).rejects.toThrow(/cannot start plugin/);
  });
});

/** The fake plugin's BackupItemAction fake.cairn.io/annotate, from a fresh plugin directory. */
async function annotateAction(callTimeoutMs?: number) {
  const found = await pluginsIn(pluginDir(), callTimeoutMs);
  const action = await externalBackupItemAction(found.session, found.plugins.find('BackupItemAction', 'fake.cairn.io/annotate')!);
  return { ...found, action };
}

describe('backup item action plugins', () => {
  it('execute an item: the returned item, related items, and the plugin log lines with its name', async () => {
    const { lines, action } = await annotateAction();
    expect(action.appliesTo()).toEqual({ includedResources: ['configmaps'] });
    const out = await action.execute(cm(), ctx);
    expect(out.item.metadata.annotations).toEqual({ 'fake/seen-by': 'fake.cairn.io/annotate' });
    expect(out.additionalItems).toEqual([{ groupResource: 'deployments.apps', namespace: 'ns', name: 'web' }]);
    await expect.poll(() => lines.find((l) => l.msg === 'executing')).toMatchObject({ level: 30, pluginName: 'fake-plugin', item: 'seen' });
  });

  it('fail an item with the plugin own error', async () => {
    const { action } = await annotateAction();
    const run = action.execute(cm({ 'fake/fail': 'true' }), ctx);
    await expect(run).rejects.toThrow(PluginCallError);
    await expect(run).rejects.toThrow('refusing this item');
  });

  it('fail the item in flight when the plugin crashes, with its last words, and restart for the next', async () => {
    const { plugins, session, lines, action } = await annotateAction();
    const crash = action.execute(cm({ 'fake/crash': 'true' }), ctx);
    await expect(crash).rejects.toThrow(PluginExitedError);
    await expect(crash).rejects.toThrow(/exited during BackupItemAction.Execute \(exit code 3\): .*panic: crashing on purpose/);
    const next = await action.execute(cm(), ctx);
    expect(next.item.metadata.annotations?.['fake/seen-by']).toBe('fake.cairn.io/annotate');
    expect(session.process(plugins.find('BackupItemAction', 'fake.cairn.io/annotate')!.command).restarts).toBe(1);
    expect(lines.some((l) => l.msg === 'plugin process had exited; started it again')).toBe(true);
  });

  it('fail a call that takes longer than the time limit', async () => {
    const { action } = await annotateAction(1500);
    const slow = action.execute(cm({ 'fake/sleep': '5000' }), ctx);
    await expect(slow).rejects.toThrow(PluginTimeoutError);
    await expect(slow).rejects.toThrow('plugin fake.cairn.io/annotate did not answer Execute within 2s');
  });

  it('v2: an operation ID from Execute, its progress, and cancel', async () => {
    const { plugins, session, lines } = await pluginsIn(pluginDir());
    const action = await externalBackupItemAction(session, plugins.find('BackupItemActionV2', 'fake.cairn.io/async')!);
    expect(action.pluginKind).toBe('BackupItemActionV2');
    expect(action.appliesTo()).toEqual({ includedResources: ['*'], labelSelector: { matchExpressions: [{ key: 'fake/async', operator: 'Exists' }] } });
    const out = await action.execute(cm({ 'fake/async': 'yes' }), ctx);
    expect(out.operationID).toBe('op-1');
    expect(await action.progress!('op-1', backup)).toEqual({ completed: false, nCompleted: 1, nTotal: 2, operationUnits: 'steps', description: 'stepping', started: new Date('2023-11-14T22:13:20.000Z') });
    expect((await action.progress!('op-1', backup)).completed).toBe(true);
    await action.cancel!('op-1', backup);
    // The log line travels on stderr, apart from the answer.
    await expect.poll(() => lines.find((l) => l.msg === 'cancel received')).toMatchObject({ operationID: 'op-1' });
  });
});

describe('object store plugins', () => {
  it('serve cairn object-store calls under the location prefix', async () => {
    const { plugins, session, lines } = await pluginsIn(pluginDir());
    const client = new ObjectStorePluginClient(session, plugins.find('ObjectStore', 'fake.cairn.io/memory')!);
    await client.init({ bucket: 'b', prefix: 'p' });
    const store = new PluginObjectStore({ client, bucket: 'b', prefix: 'p' });
    expect(store.description).toBe('fake.cairn.io/memory:b/p');
    const big = Buffer.alloc(3 * 1024 * 1024 + 5, 7);
    await store.put('backups/b1/b1.tar.gz', big);
    await store.put('backups/b2/velero-backup.json', Buffer.from('{"x":1}'));
    await store.put('empty', Buffer.alloc(0));
    expect((await store.get('backups/b1/b1.tar.gz')).equals(big)).toBe(true);
    expect((await store.get('backups/b2/velero-backup.json', { range: { offset: 2, length: 3 } })).toString()).toBe('x":');
    expect((await store.get('empty')).length).toBe(0);
    expect(await store.listCommonPrefixes('backups/')).toEqual(['backups/b1/', 'backups/b2/']);
    expect((await collect(store.list('backups/'))).map((o) => o.key)).toEqual(['backups/b1/b1.tar.gz', 'backups/b2/velero-backup.json']);
    expect(await store.head('backups/b1/b1.tar.gz')).toMatchObject({ key: 'backups/b1/b1.tar.gz', size: -1 });
    expect(await store.head('nope')).toBeUndefined();
    await expect(store.get('nope')).rejects.toThrow(ObjectNotFoundError);
    expect(await store.signedUrl('backups/b1/b1.tar.gz', { method: 'GET', expiresSeconds: 600 })).toBe('https://signed.example/p/backups/b1/b1.tar.gz?ttl=600000000000');
    await store.delete('backups/b1/b1.tar.gz');
    expect(await store.head('backups/b1/b1.tar.gz')).toBeUndefined();
    await expect.poll(() => lines.filter((l) => l.msg === 'initialised')).toHaveLength(1);
  });

  it('initialise a restarted plugin again with the same config', async () => {
    const { plugins, session, lines } = await pluginsIn(pluginDir());
    const client = new ObjectStorePluginClient(session, plugins.find('ObjectStore', 'fake.cairn.io/memory')!);
    await client.init({ bucket: 'b', prefix: '', region: 'r' });
    const proc = await session.process(plugins.find('ObjectStore', 'fake.cairn.io/memory')!.command).get();
    process.kill(proc.pid!, 'SIGKILL');
    await expect.poll(() => proc.hasExited).toBe(true);
    expect(await client.objectExists('b', 'k')).toBe(false);
    await expect.poll(() => lines.filter((l) => l.msg === 'initialised').map((l) => l.keys)).toEqual(['bucket,prefix,region', 'bucket,prefix,region']);
  });

  it('say why Init failed', async () => {
    const { plugins, session } = await pluginsIn(pluginDir());
    const client = new ObjectStorePluginClient(session, plugins.find('ObjectStore', 'fake.cairn.io/memory')!);
    await expect(client.init({ fail: 'yes' })).rejects.toThrow('config fail is set');
  });
});
