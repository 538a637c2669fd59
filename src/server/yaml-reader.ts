/**
 * Reads the YAML documents users hand the server in ConfigMaps (resource policies, resource modifiers) the way
 * Velero decodes them (strict: unknown fields and duplicate keys are refused), with the line of each problem in the
 * message. Each document kind extends YamlReader with its own scalar rules (a policy's string field takes a string or
 * a number; a modifier's takes the text as written) and throws its own error class.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';

export class YamlReader {
  constructor(
    private readonly lines: LineCounter,
    private readonly error: (message: string) => Error,
  ) {}

  fail(node: YamlNode | null | undefined, message: string): never {
    const offset = node?.range?.[0];
    throw this.error(offset === undefined ? message : `${message} (line ${this.lines.linePos(offset).line})`);
  }

  /** The map's entries by key, refusing keys not in `known` (Velero decodes with KnownFields). */
  map(node: YamlNode | null | undefined, what: string, known: readonly string[]): Map<string, YamlNode | null> {
    if (!isMap(node)) this.fail(node, `${what} must be a mapping`);
    const out = new Map<string, YamlNode | null>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '';
      if (!known.includes(key)) this.fail(pair.key as YamlNode, `unknown field "${key}" in ${what} (known: ${known.join(', ')})`);
      out.set(key, (pair.value ?? null) as YamlNode | null);
    }
    return out;
  }

  list(node: YamlNode | null | undefined, what: string): YamlNode[] {
    if (!isSeq(node)) this.fail(node, `${what} must be a list`);
    return node.items as YamlNode[];
  }
}

/**
 * Parses one YAML document for a reader: its top node and the line counter the reader reports with. Invalid YAML
 * throws `error` with the parser's first message.
 */
export function parseYamlDocument(text: string, error: (message: string) => Error): { top: YamlNode; lines: LineCounter } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) throw error(`invalid YAML: ${(doc.errors[0]?.message ?? '').split('\n')[0]}`);
  return { top: doc.contents as YamlNode, lines };
}
