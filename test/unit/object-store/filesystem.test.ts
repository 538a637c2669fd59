import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FilesystemObjectStore, FaultInjectingObjectStore, RetryingObjectStore, ObjectStoreError, objectStoreFromUrl } from '../../../src/plugins/object-store/index.js';
import { objectStoreConformance } from './conformance.js';
import { tempRoots } from '../../support/temp-roots.js';

const freshRoot = tempRoots('cairn-fs-store-');

describe('filesystem object store', () => {
  objectStoreConformance(async () => new FilesystemObjectStore({ root: freshRoot() }));

  it('leaves no temp file behind when a stream body fails', async () => {
    const root = freshRoot();
    const store = new FilesystemObjectStore({ root });
    const failing = new Readable({
      read() {
        this.destroy(new Error('source broke'));
      },
    });
    await expect(store.put('dir/obj', failing)).rejects.toThrow(/source broke/);
    expect(readdirSync(join(root, 'dir'))).toEqual([]);
    expect(await store.head('dir/obj')).toBeUndefined();
  });

  it('rejects keys that escape the root', async () => {
    const store = new FilesystemObjectStore({ root: freshRoot() });
    await expect(store.put('../evil', Buffer.from('x'))).rejects.toThrow(/invalid object key/);
    await expect(store.get('a//b')).rejects.toThrow(/invalid object key/);
  });

  it('opens from a plain path and a file:// URL', async () => {
    const root = freshRoot();
    await (await objectStoreFromUrl({ url: root })).put('k', Buffer.from('v'));
    expect((await (await objectStoreFromUrl({ url: `file://${root}` })).get('k')).toString()).toBe('v');
    await expect(objectStoreFromUrl({ url: 'ftp://x/y' })).rejects.toThrow(/unsupported repository URL scheme/);
  });
});

describe('store decorators', () => {
  it('retries retryable faults and then succeeds', async () => {
    const faulty = new FaultInjectingObjectStore(new FilesystemObjectStore({ root: freshRoot() }));
    faulty.addFault({ ops: ['put'], times: 2 });
    const store = new RetryingObjectStore(faulty, { baseDelayMs: 1 });
    await store.put('k', Buffer.from('v'));
    expect(faulty.calls.put).toBe(3);
    expect((await store.get('k')).toString()).toBe('v');
  });

  it('gives up after the attempt budget with the last error', async () => {
    const faulty = new FaultInjectingObjectStore(new FilesystemObjectStore({ root: freshRoot() }));
    faulty.addFault({ ops: ['get'], message: 'connection refused' });
    const store = new RetryingObjectStore(faulty, { attempts: 3, baseDelayMs: 1 });
    await expect(store.get('k')).rejects.toBeInstanceOf(ObjectStoreError);
    expect(faulty.calls.get).toBe(3);
  });

  it('does not retry non-retryable errors', async () => {
    const faulty = new FaultInjectingObjectStore(new FilesystemObjectStore({ root: freshRoot() }));
    faulty.addFault({ ops: ['put'], retryable: false });
    const store = new RetryingObjectStore(faulty, { baseDelayMs: 1 });
    await expect(store.put('k', Buffer.from('v'))).rejects.toThrow(/injected fault/);
    expect(faulty.calls.put).toBe(1);
  });
});
