import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../src/base/errors.js';
import { selectObjects } from '../../../src/cli/select.js';
import type { CustomClient } from '../../../src/kube/custom.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> } };
const objs: Obj[] = ['c', 'a', 'b'].map((name) => ({ apiVersion: 'v1', kind: 'X', metadata: { name, labels: { keep: name === 'b' ? 'no' : 'yes' } } }));

const client = {
  get: async (_ns: string, name: string) => objs.find((o) => o.metadata.name === name),
  list: async (_ns: string, selector?: string) => (selector === 'keep=yes' ? objs.filter((o) => o.metadata.labels?.keep === 'yes') : objs),
} as unknown as CustomClient<Obj>;

describe('selectObjects', () => {
  it('lists everything, or what the selector matches, sorted by name', async () => {
    expect((await selectObjects(client, { namespace: 'velero', names: [], what: 'backup' })).map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    expect((await selectObjects(client, { namespace: 'velero', names: [], selector: 'keep=yes', what: 'backup' })).map((o) => o.metadata.name)).toEqual(['a', 'c']);
  });

  it('returns the named objects and names the first missing one', async () => {
    expect((await selectObjects(client, { namespace: 'velero', names: ['c', 'a'], what: 'backup' })).map((o) => o.metadata.name)).toEqual(['a', 'c']);
    await expect(selectObjects(client, { namespace: 'velero', names: ['a', 'zz'], what: 'restore' })).rejects.toThrow(new NotFoundError('restore "zz" not found in namespace "velero"'));
  });
});
