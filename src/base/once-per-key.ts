/**
 * Work done once per key (a repository made ready once per location and namespace): callers for a key share the run
 * under way or finished; a failure is forgotten, so the next caller for that key tries again.
 */
export class OncePerKey {
  private readonly runs = new Map<string, Promise<void>>();

  run(key: string, work: () => Promise<void>): Promise<void> {
    let pending = this.runs.get(key);
    if (!pending) {
      pending = work();
      pending.catch(() => this.runs.delete(key));
      this.runs.set(key, pending);
    }
    return pending;
  }
}
