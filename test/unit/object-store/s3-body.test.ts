import { describe, expect, it } from 'vitest';
import { ObjectStoreError } from '../../../src/plugins/object-store/errors.js';
import { readBody } from '../../../src/plugins/object-store/s3.js';

async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p);
}

describe('reading an S3 response body', () => {
  it('copies the chunks into one buffer of the announced length', async () => {
    expect((await readBody(chunks('ab', 'cde', 'f'), 6)).toString()).toBe('abcdef');
  });

  it('uses the target buffer when it is large enough, and allocates when it is not', async () => {
    const target = Buffer.alloc(8);
    const got = await readBody(chunks('abc', 'd'), 4, target);
    expect(got.toString()).toBe('abcd');
    expect(got.buffer).toBe(target.buffer);
    const small = Buffer.alloc(2);
    expect((await readBody(chunks('abc'), 3, small)).buffer).not.toBe(small.buffer);
  });

  it('concatenates when the length is unknown', async () => {
    expect((await readBody(chunks('x', 'yz'), undefined)).toString()).toBe('xyz');
  });

  it('a body cut short, or longer than announced, is a retryable error', async () => {
    const short = await readBody(chunks('ab'), 5).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(ObjectStoreError);
    expect((short as ObjectStoreError).retryable).toBe(true);
    const long = await readBody(chunks('abcdef'), 3).catch((e: unknown) => e);
    expect((long as ObjectStoreError).retryable).toBe(true);
  });
});
