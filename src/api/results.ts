/**
 * Warnings and errors of a backup or restore, shaped as Velero's results file (`<name>-results.gz`):
 * `{"warnings": Result, "errors": Result}` with `Result = {velero?: [], cluster?: [], namespaces?: {ns: []}}`.
 */
export interface Result {
  velero?: string[];
  cluster?: string[];
  namespaces?: Record<string, string[]>;
}

export interface Results {
  warnings: Result;
  errors: Result;
}

export type ResultScope = { kind: 'velero' } | { kind: 'cluster' } | { kind: 'namespace'; namespace: string };

export class ResultsCollector {
  private readonly warnings: Result = {};
  private readonly errors: Result = {};

  warn(scope: ResultScope, message: string): void {
    add(this.warnings, scope, message);
  }

  error(scope: ResultScope, message: string): void {
    add(this.errors, scope, message);
  }

  get warningCount(): number {
    return count(this.warnings);
  }

  get errorCount(): number {
    return count(this.errors);
  }

  toJSON(): Results {
    return { warnings: structuredClone(this.warnings), errors: structuredClone(this.errors) };
  }
}

/** The scope of an item: its namespace, or cluster for cluster-scoped items. */
export function scopeOf(namespace: string | undefined): ResultScope {
  return namespace ? { kind: 'namespace', namespace } : { kind: 'cluster' };
}

function add(r: Result, scope: ResultScope, message: string): void {
  if (scope.kind === 'velero') (r.velero ??= []).push(message);
  else if (scope.kind === 'cluster') (r.cluster ??= []).push(message);
  else ((r.namespaces ??= {})[scope.namespace] ??= []).push(message);
}

export function count(r: Result): number {
  return (r.velero?.length ?? 0) + (r.cluster?.length ?? 0) + Object.values(r.namespaces ?? {}).reduce((n, l) => n + l.length, 0);
}
