import { closeSync, fstatSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { preallocate } from '../../../src/datapath/preallocate.js';
import { cleanupTempDirs, tempDir } from './helpers.js';

afterAll(cleanupTempDirs);

describe.runIf(process.platform === 'linux')('preallocate', () => {
  it('reserves the blocks of a file about to be written, and its size', () => {
    const fd = openSync(join(tempDir('prealloc'), 'f'), 'w');
    try {
      expect(preallocate(fd, 3 << 20)).toBe(3 << 20);
      const st = fstatSync(fd);
      expect(st.size).toBe(3 << 20);
      expect(st.blocks * 512).toBeGreaterThanOrEqual(3 << 20);
    } finally {
      closeSync(fd);
    }
  });

  it('reserves nothing for an empty file', () => {
    const fd = openSync(join(tempDir('prealloc'), 'f'), 'w');
    try {
      expect(preallocate(fd, 0)).toBe(0);
      expect(fstatSync(fd).size).toBe(0);
    } finally {
      closeSync(fd);
    }
  });

  it('answers 0 and throws nothing when the call is refused (a descriptor not open for writing)', () => {
    const path = join(tempDir('prealloc'), 'f');
    writeFileSync(path, 'abc');
    const fd = openSync(path, 'r');
    try {
      expect(preallocate(fd, 1 << 20)).toBe(0);
      expect(fstatSync(fd).size).toBe(3);
    } finally {
      closeSync(fd);
    }
  });
});
