/**
 * The items a backup holds, as Velero's `<name>-resource-list.json.gz`: `{"<apiVersion>/<Kind>": ["ns/name", ...]}`
 * (cluster-scoped items without the namespace), each list sorted. Also answers "already backed up?" so an item
 * reached twice (listed, and again as a related item) is written once.
 */
export class BackedUpItems {
  private readonly keys = new Set<string>();
  private readonly byKind = new Map<string, string[]>();

  static key(groupResource: string, namespace: string | undefined, name: string): string {
    return `${groupResource}/${namespace ?? ''}/${name}`;
  }

  has(groupResource: string, namespace: string | undefined, name: string): boolean {
    return this.keys.has(BackedUpItems.key(groupResource, namespace, name));
  }

  /** Marks an item taken (before it is written, so cycles such as PVC → PV → PVC end). */
  claim(groupResource: string, namespace: string | undefined, name: string): boolean {
    const k = BackedUpItems.key(groupResource, namespace, name);
    if (this.keys.has(k)) return false;
    this.keys.add(k);
    return true;
  }

  /** Records a written item in the resource list. */
  record(apiVersion: string, kind: string, namespace: string | undefined, name: string): void {
    const listKey = `${apiVersion}/${kind}`;
    let list = this.byKind.get(listKey);
    if (!list) this.byKind.set(listKey, (list = []));
    list.push(namespace ? `${namespace}/${name}` : name);
  }

  get size(): number {
    return [...this.byKind.values()].reduce((n, l) => n + l.length, 0);
  }

  toResourceList(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const k of [...this.byKind.keys()].sort()) out[k] = [...(this.byKind.get(k) ?? [])].sort();
    return out;
  }
}
