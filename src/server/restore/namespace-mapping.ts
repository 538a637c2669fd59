/**
 * `spec.namespaceMapping` (source → target): items land in the target namespace; filters still use the source.
 */
import { isValidDnsLabel, type Restore } from '../../api/index.js';

export class NamespaceMapping {
  private readonly map: Map<string, string>;

  constructor(mapping: Record<string, string> | undefined) {
    this.map = new Map(Object.entries(mapping ?? {}));
  }

  static of(restore: Restore): NamespaceMapping {
    return new NamespaceMapping(restore.spec.namespaceMapping);
  }

  target(namespace: string): string {
    return this.map.get(namespace) ?? namespace;
  }

  get isEmpty(): boolean {
    return this.map.size === 0;
  }
}

/** Validation messages for a mapping: names must be DNS labels, and two sources may not share a target. */
export function namespaceMappingProblems(mapping: Record<string, string> | undefined): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const [src, dst] of Object.entries(mapping ?? {})) {
    if (!isValidDnsLabel(src)) problems.push(`invalid namespace mapping source "${src}": not a valid namespace name`);
    if (!isValidDnsLabel(dst)) problems.push(`invalid namespace mapping target "${dst}": not a valid namespace name`);
    const other = seen.get(dst);
    if (other !== undefined) problems.push(`namespaces "${other}" and "${src}" are both mapped to "${dst}"`);
    seen.set(dst, src);
  }
  return problems;
}
