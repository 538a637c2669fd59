import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../../src/plugins/object-store/index.js';
import { BytePacer, InvalidUploadRateError, UploadRateLimitedObjectStore, validUploadRate } from '../../../src/plugins/object-store/upload-rate.js';
import { objectStoreConformance } from './conformance.js';
import { tempRoots } from '../../support/temp-roots.js';

const freshRoot = tempRoots('cairn-rate-store-');

describe('upload rate limit', () => {
  // Fast enough that the conformance suite's small objects are not held up.
  objectStoreConformance(async () => new UploadRateLimitedObjectStore(new FilesystemObjectStore({ root: freshRoot() }), 1 << 30));

  it('paces puts so the bytes go out at the set rate, in call order', () => {
    let now = 1000;
    const pacer = new BytePacer(1000, () => now);
    expect(pacer.reserve(500)).toBe(0); // the first put goes at once
    expect(pacer.reserve(2000)).toBe(500); // after the first one's 500 bytes have had their half second
    expect(pacer.reserve(100)).toBe(2500);
    now += 10_000; // idle: no credit is saved up beyond "now"
    expect(pacer.reserve(100)).toBe(0);
    expect(pacer.reserve(100)).toBe(100);
  });

  it('a put waiting for its turn gives up when its signal aborts, and nothing is written', async () => {
    const inner = new FilesystemObjectStore({ root: freshRoot() });
    const store = new UploadRateLimitedObjectStore(inner, 1);
    await store.put('first', Buffer.alloc(10)); // the next put would wait 10 s
    const controller = new AbortController();
    const second = store.put('second', Buffer.from('x'), { signal: controller.signal });
    controller.abort();
    await expect(second).rejects.toThrow(/abort/i);
    expect(await inner.head('second')).toBeUndefined();
  });

  it('passes stream bodies through whole', async () => {
    const inner = new FilesystemObjectStore({ root: freshRoot() });
    const store = new UploadRateLimitedObjectStore(inner, 1 << 30);
    await store.put('s', Readable.from([Buffer.from('abc'), Buffer.from('def')]));
    expect((await inner.get('s')).toString()).toBe('abcdef');
  });

  it('refuses a rate that is not a whole number of bytes per second', () => {
    for (const bad of [0, -5, 1.5, Number.NaN]) expect(() => validUploadRate(bad, 'uploadBytesPerSecond')).toThrow(InvalidUploadRateError);
    expect(() => validUploadRate(0, 'uploadBytesPerSecond')).toThrow(/uploadBytesPerSecond must be a whole number of bytes per second/);
    expect(validUploadRate(1024, 'x')).toBe(1024);
  });
});
