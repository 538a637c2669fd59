/**
 * Reads the YAML documents users hand the server in ConfigMaps (resource policies, resource modifiers) the way
 * Velero decodes them (strict: unknown fields and duplicate keys are refused), with the line of each problem in the
 * message. Each document kind extends YamlReader with its own scalar rules (a policy's string field takes a string or
 * a number; a modifier's takes the text as written) and throws its own error class.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';

export abstract class YamlReader {
  constructor(
    private readonly lines: LineCounter,
    private readonly error: (message: string) => Error,
  ) {}

  /** A string field, by the document kind's scalar rules. */
  abstract string(node: YamlNode | null | undefined, what: string): string;

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

/** The top of a document that starts with Velero's `version:`. */
export interface VersionedTop<R extends YamlReader> {
  r: R;
  /** The top node, for messages about the document as a whole. */
  node: YamlNode;
  /** The top map's entries. */
  top: Map<string, YamlNode | null>;
  /** The version as written ('' when absent), and its node for messages. */
  version: string;
  versionNode: YamlNode | null | undefined;
}

/**
 * Parses a document whose top is a map of `keys` (`what` names it in messages) with a `version`, read by a `Reader`;
 * its problems are thrown as `ErrorClass`.
 */
export function readVersionedTop<R extends YamlReader>(
  text: string,
  o: { Reader: new (lines: LineCounter, error: (message: string) => Error) => R; ErrorClass: new (message: string) => Error; what: string; keys: readonly string[] },
): VersionedTop<R> {
  const error = (message: string) => new o.ErrorClass(message);
  const doc = parseYamlDocument(text, error);
  const r = new o.Reader(doc.lines, error);
  const top = r.map(doc.top, o.what, o.keys);
  const versionNode = top.get('version');
  const version = versionNode ? r.string(versionNode, 'version') : '';
  return { r, node: doc.top, top, version, versionNode };
}

/**
 * The document a ConfigMap holds under its single data key (Velero refuses a ConfigMap with more or fewer), parsed by
 * `parse`; a problem is thrown as `ErrorClass`, naming the ConfigMap and the key. `holding` words what the key holds.
 */
export function parseSingleKeyConfigMap<T>(
  cm: { metadata?: { name?: string; namespace?: string }; data?: Record<string, string> | undefined },
  o: { holding: string; ErrorClass: new (message: string) => Error; parse: (text: string, source: string) => T },
): T {
  const source = `ConfigMap ${cm.metadata?.namespace ?? ''}/${cm.metadata?.name ?? ''}`;
  const values = Object.entries(cm.data ?? {});
  if (values.length !== 1) throw new o.ErrorClass(`${source} must have exactly one data key holding the ${o.holding} (it has ${values.length})`);
  try {
    return o.parse(values[0]![1], source);
  } catch (err) {
    if (err instanceof o.ErrorClass) throw new o.ErrorClass(`${source}, key ${values[0]![0]}: ${err.message}`);
    throw err;
  }
}
