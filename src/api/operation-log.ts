/**
 * The text of backup and restore logs in storage (`<backup>-logs.gz`, `restore-<name>-logs.gz`): Velero writes
 * them with logrus's TextFormatter (no colours, as to a file), and users and scripts grep them for `level=error`,
 * so cairn writes the same lines:
 *
 *     time="2025-10-01T10:00:00Z" level=info msg="Backing up item" backup=velero/b1 name=web resource=pods
 *
 * The rules, as logrus v1.9 formats an entry: `time` (RFC 3339, whole seconds), `level` (`warning`, not `warn`),
 * `msg` (left out when empty), then the fields sorted by key. A key that collides with time, msg or level is
 * written as `fields.<key>`. A value is written bare when every character is a letter, a digit or one of
 * `-._/@^+`, else quoted as Go's `%q` does (strconv.Quote). An empty value is written bare (nothing after `=`).
 */

export type LogrusLevel = 'panic' | 'fatal' | 'error' | 'warning' | 'info' | 'debug' | 'trace';

export interface LogrusEntry {
  time: Date;
  level: LogrusLevel;
  msg: string;
  /** Field values; numbers and booleans are written as Go's fmt.Sprint writes them. */
  fields?: Readonly<Record<string, string | number | boolean>>;
}

const FIXED_KEYS = ['time', 'msg', 'level'] as const;

/** One log line, without the newline. */
export function formatLogrusLine(entry: LogrusEntry): string {
  const data = new Map<string, string>();
  for (const [k, v] of Object.entries(entry.fields ?? {})) data.set(k, typeof v === 'string' ? v : String(v));
  for (const k of FIXED_KEYS) {
    const clash = data.get(k);
    if (clash === undefined) continue;
    data.delete(k);
    data.set(`fields.${k}`, clash);
  }
  const parts = [`time=${logrusValue(rfc3339Seconds(entry.time))}`, `level=${entry.level}`];
  if (entry.msg !== '') parts.push(`msg=${logrusValue(entry.msg)}`);
  for (const k of [...data.keys()].sort(byteOrder)) parts.push(`${k}=${logrusValue(data.get(k) ?? '')}`);
  return parts.join(' ');
}

/** Go's sort.Strings: byte order of the UTF-8 encoding (same as UTF-16 code-unit order outside surrogates). */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function rfc3339Seconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const BARE = /^[A-Za-z0-9\-._/@^+]*$/;

/** A value as logrus writes it: bare when safe, else Go-quoted. */
export function logrusValue(s: string): string {
  return BARE.test(s) ? s : goQuote(s);
}

/** Letters, marks, numbers, punctuation, symbols and the ASCII space: what Go's strconv.IsPrint keeps as is. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's strconv.Quote for valid UTF-8 text. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (PRINTABLE.test(ch)) out += ch;
    else if (ch === '\u0007') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\v') out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd'; // a lone surrogate is not valid UTF-8; Go writes U+FFFD
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

export interface ParsedLogrusLine {
  time: string;
  level: string;
  msg: string;
  /** Every key=value of the line other than time, level and msg, in the order written. */
  fields: Record<string, string>;
}

/**
 * Reads one logrus text line back (the inverse of formatLogrusLine for what it writes); undefined when the line is
 * not in that format (no `time=` first, no `level=`, or a value that does not parse).
 */
export function parseLogrusLine(line: string): ParsedLogrusLine | undefined {
  const pairs: [string, string][] = [];
  let i = 0;
  while (i < line.length) {
    const eq = line.indexOf('=', i);
    if (eq <= i) return undefined;
    const key = line.slice(i, eq);
    if (/\s/.test(key)) return undefined;
    let j = eq + 1;
    let value: string;
    if (line[j] === '"') {
      const end = quotedEnd(line, j);
      if (end === undefined) return undefined;
      const unquoted = goUnquote(line.slice(j, end + 1));
      if (unquoted === undefined) return undefined;
      value = unquoted;
      j = end + 1;
    } else {
      const sp = line.indexOf(' ', j);
      const stop = sp === -1 ? line.length : sp;
      value = line.slice(j, stop);
      if (!BARE.test(value)) return undefined;
      j = stop;
    }
    pairs.push([key, value]);
    if (j < line.length && line[j] !== ' ') return undefined;
    i = j + 1;
  }
  if (pairs[0]?.[0] !== 'time' || pairs[1]?.[0] !== 'level') return undefined;
  const fields: Record<string, string> = {};
  let msg = '';
  for (const [k, v] of pairs.slice(2)) {
    if (k === 'msg') msg = v;
    else fields[k] = v;
  }
  return { time: pairs[0][1], level: pairs[1][1], msg, fields };
}

function quotedEnd(line: string, start: number): number | undefined {
  for (let k = start + 1; k < line.length; k++) {
    if (line[k] === '\\') k++;
    else if (line[k] === '"') return k;
  }
  return undefined;
}

const SIMPLE_ESCAPES: Record<string, string> = { a: '\u0007', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"' };

function goUnquote(q: string): string | undefined {
  let out = '';
  for (let k = 1; k < q.length - 1; k++) {
    const c = q[k] ?? '';
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = q[++k] ?? '';
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const width = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    if (!width) return undefined;
    const hex = q.slice(k + 1, k + 1 + width);
    if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) return undefined;
    out += String.fromCodePoint(parseInt(hex, 16));
    k += width;
  }
  return out;
}
