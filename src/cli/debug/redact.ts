/**
 * Redaction for the debug bundle. `debug` never reads a Secret; this is the second line: any value in the objects,
 * ConfigMaps and logs it keeps that looks like a credential is replaced by `<redacted>` before it is written.
 *
 * A value is credential-like when its key says so (password, secret, token, access key, …), when it is a
 * `{name, value}` pair (an environment variable) whose name says so, when it is a URL with a password, or a PEM
 * private key. Keys that only name or point at a credential (`secretName`, `credential: {name, key}`) are kept:
 * they say where a credential is, not what it is, and are what one needs to debug a setup.
 */

export const REDACTED = '<redacted>';

/** Key names whose string values are credentials. */
const SECRET_KEY = /(pass(word|wd|phrase)?|secret|token|credential|api[-_]?key|access[-_]?key|private[-_]?key|auth|bearer|session[-_]?key|signature)/i;
/** Keys that name or point at a credential rather than hold one. */
const REFERENCE_KEY = /(name|namespace|ref|file|path|kind|type|selector|uid)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !REFERENCE_KEY.test(key);
}

const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s/:@"']+:)[^\s/@"']+@/gi;
const PEM_PRIVATE_KEY = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;
/** `key=value`, `key: value`, `"key":"value"` in free text (log lines, ConfigMap files), for credential-like keys. */
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
const TEXT_PAIR = /(["']?)([A-Za-z0-9_.-]*)\1(\s*[=:]\s*)(["']?)([^\s"',;}&]+)\4/g;

/** Redacts credential-looking parts of free text: logs, ConfigMap files, annotations. */
export function redactText(text: string): string {
  return text
    .replace(PEM_PRIVATE_KEY, REDACTED)
    .replace(URL_PASSWORD, `$1${REDACTED}@`)
    .replace(BEARER, `$1${REDACTED}`)
    .replace(TEXT_PAIR, (whole, q: string, key: string, sep: string, vq: string, value: string) =>
      isSecretKey(key) && value !== REDACTED ? `${q}${key}${q}${sep}${vq}${REDACTED}${vq}` : whole,
    );
}

/**
 * A copy of a Kubernetes object fit for the bundle: managedFields dropped (noise), credential-like values redacted at
 * any depth; other strings pass through redactText (a JSON document kept in a ConfigMap, an annotation).
 */
export function redactObject<T>(obj: T): T {
  return walk(obj, undefined) as T;
}

function walk(value: unknown, key: string | undefined): unknown {
  if (typeof value === 'string') return key !== undefined && isSecretKey(key) ? REDACTED : redactText(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, undefined));
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  // An environment variable (or any name/value pair) whose name says it holds a credential.
  const envSecret = typeof record.name === 'string' && typeof record.value === 'string' && isSecretKey(record.name);
  for (const [k, v] of Object.entries(record)) {
    if (k === 'managedFields') continue;
    if (envSecret && k === 'value') out[k] = REDACTED;
    else out[k] = walk(v, k);
  }
  return out;
}
