/**
 * The per-node concurrency of data-path pods (loadConcurrency, docs/node-agent.md): a PVB/PVR holds a slot
 * from the moment this node accepts it until it ends, so the hosting pods of Accepted, Prepared and InProgress work
 * on a node never outnumber the limit. Acquiring is synchronous, so the PVB and PVR controllers cannot both take
 * the last slot.
 */
export class NodeSlots {
  private readonly held = new Set<string>();
  private readonly freed = new Set<() => void>();

  constructor(readonly limit: number) {}

  /** Calls `listener` whenever a slot is given back, so waiting work is looked at again at once. */
  onFree(listener: () => void): void {
    this.freed.add(listener);
  }

  /** Takes a slot for `key` if one is free (or `key` already holds one). */
  tryAcquire(key: string): boolean {
    if (this.held.has(key)) return true;
    if (this.held.size >= this.limit) return false;
    this.held.add(key);
    return true;
  }

  /** Records work that already runs (found at start or resumed), even beyond the limit: it exists either way. */
  hold(key: string): void {
    this.held.add(key);
  }

  release(key: string): void {
    if (!this.held.delete(key)) return;
    for (const l of this.freed) l();
  }

  get inUse(): number {
    return this.held.size;
  }
}
