/**
 * Fault injection for tests: makes chosen operations fail (or the whole store go "unreachable") so tests can show
 * what users see when the network or the server breaks mid-backup.
 */
import type { Readable } from 'node:stream';
import type { GetOptions, ObjectInfo, ObjectStore, PutOptions } from './types.js';
import { ObjectStoreError } from './errors.js';

export type StoreOperation = 'get' | 'put' | 'head' | 'list' | 'delete';

export interface FaultRule {
  /** Operations this rule applies to (default: all). */
  ops?: StoreOperation[];
  /** Only keys starting with this prefix (default: all keys). */
  keyPrefix?: string;
  /** Let this many matching calls succeed before failing. */
  after?: number;
  /** Fail this many matching calls, then succeed again (default: forever). */
  times?: number;
  /** Whether the injected error is retryable (default true, like a connection reset). */
  retryable?: boolean;
  message?: string;
}

export class FaultInjectingObjectStore implements ObjectStore {
  readonly description: string;
  private rules: { rule: FaultRule; seen: number; failed: number }[] = [];
  /** Calls made, per operation, for assertions. */
  readonly calls: Record<StoreOperation, number> = { get: 0, put: 0, head: 0, list: 0, delete: 0 };

  constructor(private readonly inner: ObjectStore) {
    this.description = inner.description;
  }

  addFault(rule: FaultRule): void {
    this.rules.push({ rule, seen: 0, failed: 0 });
  }

  clearFaults(): void {
    this.rules = [];
  }

  private check(op: StoreOperation, key: string): void {
    this.calls[op]++;
    for (const r of this.rules) {
      if (r.rule.ops && !r.rule.ops.includes(op)) continue;
      if (r.rule.keyPrefix !== undefined && !key.startsWith(r.rule.keyPrefix)) continue;
      r.seen++;
      if (r.seen <= (r.rule.after ?? 0)) continue;
      if (r.rule.times !== undefined && r.failed >= r.rule.times) continue;
      r.failed++;
      throw new ObjectStoreError(r.rule.message ?? `injected fault: ${op} ${key}: connection refused`, { retryable: r.rule.retryable ?? true });
    }
  }

  async get(key: string, options?: GetOptions): Promise<Buffer> {
    this.check('get', key);
    return this.inner.get(key, options);
  }
  async getStream(key: string, options?: { signal?: AbortSignal }): Promise<Readable> {
    this.check('get', key);
    return this.inner.getStream(key, options);
  }
  async put(key: string, body: Buffer | Readable, options?: PutOptions): Promise<void> {
    this.check('put', key);
    return this.inner.put(key, body, options);
  }
  async head(key: string): Promise<ObjectInfo | undefined> {
    this.check('head', key);
    return this.inner.head(key);
  }
  async *list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<ObjectInfo> {
    this.check('list', prefix);
    yield* this.inner.list(prefix, options);
  }
  async listCommonPrefixes(prefix: string, delimiter?: string): Promise<string[]> {
    this.check('list', prefix);
    return this.inner.listCommonPrefixes(prefix, delimiter);
  }
  async delete(key: string): Promise<void> {
    this.check('delete', key);
    return this.inner.delete(key);
  }
}
