/**
 * A repository's key files (docs/repository-format.md §3.2, `keys/<id>`): one per password, each wrapping the same
 * master keys. `cairn repo key` lists, adds and removes them through Repository.keyRing.
 */
import { randomBytes } from 'node:crypto';
import type { ObjectStore } from '../plugins/object-store/types.js';
import type { MasterKeys } from './crypto.js';
import { RepositoryLockedError, RepositoryNotFoundError } from './errors.js';
import { createKeyFile, DEFAULT_KDF, type KeyFile } from './keys.js';

export interface KeyInfo {
  id: string;
  created: string;
  hostname: string;
  username: string;
  /** The key file this process opened the repository with. */
  current: boolean;
}

const PREFIX = 'keys/';

/** A new key file's object: `keys/<32 random bytes in hex>`, plaintext JSON. Returns its ID. */
export async function writeKeyFile(store: ObjectStore, file: KeyFile): Promise<string> {
  const id = randomBytes(32).toString('hex');
  await store.put(PREFIX + id, Buffer.from(JSON.stringify(file, null, 2)));
  return id;
}

export class KeyRing {
  constructor(
    private readonly store: ObjectStore,
    private readonly keys: MasterKeys,
    /** The ID of the key file the repository was opened with. */
    readonly currentId: string,
  ) {}

  async list(): Promise<KeyInfo[]> {
    const out: KeyInfo[] = [];
    for await (const { key } of this.store.list(PREFIX)) {
      const id = key.slice(PREFIX.length);
      const file = JSON.parse((await this.store.get(key)).toString()) as KeyFile;
      out.push({ id, created: file.created, hostname: file.hostname, username: file.username, current: id === this.currentId });
    }
    return out;
  }

  /** Adds a key file for another password; returns its ID. */
  async add(password: string, kdf: { N: number; r: number; p: number } = DEFAULT_KDF): Promise<string> {
    return writeKeyFile(this.store, await createKeyFile(this.keys, password, kdf));
  }

  /** Removes a key file by ID or unique prefix; never the only one, nor the one this process opened with. */
  async remove(idOrPrefix: string): Promise<string> {
    const keys = await this.list();
    const matches = keys.filter((k) => k.id.startsWith(idOrPrefix));
    if (matches.length !== 1) throw new RepositoryNotFoundError(matches.length === 0 ? `no key ${idOrPrefix}` : `key prefix ${idOrPrefix} is ambiguous`);
    const victim = matches[0]!;
    if (keys.length === 1) throw new RepositoryLockedError('refusing to remove the only key: the repository could never be opened again');
    if (victim.current) throw new RepositoryLockedError('refusing to remove the key this command was opened with; open with another password to remove it');
    await this.store.delete(PREFIX + victim.id);
    return victim.id;
  }
}
