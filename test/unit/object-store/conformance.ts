/**
 * The object-store conformance suite: every backend must pass it. Call it inside a describe() with a factory that
 * returns a fresh, empty store (and optionally a cleanup).
 */
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { ObjectStore } from '../../../src/plugins/object-store/index.js';
import { ObjectNotFoundError } from '../../../src/plugins/object-store/index.js';

async function collect(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(prefix)) keys.push(o.key);
  return keys;
}

export interface ConformanceOptions {
  /**
   * The backend reports sizes (head, list). Velero's ObjectStore plugin protocol has no stat, so a plugin's store
   * reports -1: the size checks are replaced by checks that the object exists.
   */
  sizes?: boolean;
}

export function objectStoreConformance(makeStore: () => Promise<ObjectStore>, opts: ConformanceOptions = {}): void {
  const sizes = opts.sizes ?? true;
  it('puts and gets whole objects and byte ranges', async () => {
    const store = await makeStore();
    const body = randomBytes(100_000);
    await store.put('a/b/obj', body);
    expect((await store.get('a/b/obj')).equals(body)).toBe(true);
    expect((await store.get('a/b/obj', { range: { offset: 1000, length: 5000 } })).equals(body.subarray(1000, 6000))).toBe(true);
    expect((await store.get('a/b/obj', { range: { offset: 99_990, length: 10 } })).equals(body.subarray(99_990))).toBe(true);
  });

  it('replaces an object as a whole', async () => {
    const store = await makeStore();
    await store.put('x', Buffer.from('first version, longer'));
    await store.put('x', Buffer.from('second'));
    expect((await store.get('x')).toString()).toBe('second');
  });

  it('puts stream bodies', async () => {
    const store = await makeStore();
    const parts = [randomBytes(70_000), randomBytes(1), randomBytes(33_333)];
    await store.put('streamed/obj', Readable.from(parts));
    expect((await store.get('streamed/obj')).equals(Buffer.concat(parts))).toBe(true);
    const chunks: Buffer[] = [];
    for await (const c of await store.getStream('streamed/obj')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(Buffer.concat(parts))).toBe(true);
  });

  it('reports missing objects as not found', async () => {
    const store = await makeStore();
    await expect(store.get('missing/obj')).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(store.getStream('missing/obj')).rejects.toBeInstanceOf(ObjectNotFoundError);
    expect(await store.head('missing/obj')).toBeUndefined();
    await store.delete('missing/obj');
  });

  it('heads objects with their size', async () => {
    const store = await makeStore();
    await store.put('h/one', Buffer.alloc(1234, 7));
    const info = await store.head('h/one');
    expect(info?.size).toBe(sizes ? 1234 : -1);
    expect(info?.key).toBe('h/one');
    expect(info?.lastModified).toBeInstanceOf(Date);
  });

  it('lists by prefix in ascending key order, including partial names', async () => {
    const store = await makeStore();
    const keys = ['data/ab/1', 'data/ab/2', 'data/ac/3', 'data-x', 'index/i1', 'config', 'data/a'];
    for (const k of keys) await store.put(k, Buffer.from(k));
    expect(await collect(store, 'data/')).toEqual(['data/a', 'data/ab/1', 'data/ab/2', 'data/ac/3']);
    expect(await collect(store, 'data/ab')).toEqual(['data/ab/1', 'data/ab/2']);
    expect(await collect(store, 'data')).toEqual(['data-x', 'data/a', 'data/ab/1', 'data/ab/2', 'data/ac/3']);
    expect(await collect(store, 'nothing/')).toEqual([]);
    expect((await collect(store, '')).sort()).toEqual([...keys].sort());
    const found: number[] = [];
    for await (const o of store.list('index/')) found.push(o.size);
    expect(found).toEqual([sizes ? 8 : -1]);
  });

  it('lists many objects across pages', async () => {
    const store = await makeStore();
    const keys = Array.from({ length: 1100 }, (_, i) => `many/${String(i).padStart(5, '0')}`);
    for (let i = 0; i < keys.length; i += 100) await Promise.all(keys.slice(i, i + 100).map((k) => store.put(k, Buffer.from('.'))));
    expect(await collect(store, 'many/')).toEqual(keys);
  });

  it('lists common prefixes', async () => {
    const store = await makeStore();
    for (const k of ['backups/b1/a', 'backups/b1/b', 'backups/b2/c', 'backups/top', 'restores/r1/x']) await store.put(k, Buffer.from(k));
    expect(await store.listCommonPrefixes('backups/', '/')).toEqual(['backups/b1/', 'backups/b2/']);
    expect(await store.listCommonPrefixes('', '/')).toEqual(['backups/', 'restores/']);
  });

  it('deletes objects, and deleting twice is fine', async () => {
    const store = await makeStore();
    await store.put('d/1', Buffer.from('1'));
    await store.delete('d/1');
    await store.delete('d/1');
    expect(await store.head('d/1')).toBeUndefined();
    expect(await collect(store, 'd/')).toEqual([]);
  });

  it('stores empty objects', async () => {
    const store = await makeStore();
    await store.put('empty', Buffer.alloc(0));
    expect((await store.get('empty')).length).toBe(0);
    expect((await store.head('empty'))?.size).toBe(sizes ? 0 : -1);
  });
}
