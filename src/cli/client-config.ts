/**
 * The client configuration file (`cairn client config set|get`), Velero's client config in cairn's own place:
 * `$XDG_CONFIG_HOME/cairn/config.json`, else `$HOME/.config/cairn/config.json`. The format is Velero's (a JSON object
 * of strings: `namespace`, `colorized`, `features`), so a copy of `~/.config/velero/config.json` works, but cairn never
 * reads Velero's file: a velero client and cairn on one machine may well be pointed at different installs.
 */
import { mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../base/errors.js';

export const CLIENT_CONFIG_KEYS = ['namespace', 'colorized', 'features'] as const;
export type ClientConfigKey = (typeof CLIENT_CONFIG_KEYS)[number];

/** Velero's keys that cairn does not act on, with the reason `set` gives. */
const REFUSED_KEYS: Record<string, string> = {
  cacert: 'cairn reads stored files through the cluster (docs/cli.md "Files read through the cluster") and has no CA bundle setting; use the kubeconfig\'s certificate-authority',
};

/** Values as Velero stores them: strings (other JSON types are kept but read as unset). */
export type ClientConfig = Record<string, unknown>;

export interface ConfigPathEnv {
  XDG_CONFIG_HOME?: string | undefined;
  HOME?: string | undefined;
}

export function clientConfigPath(env: ConfigPathEnv = process.env): string {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'cairn', 'config.json');
  return join(env.HOME || homedir(), '.config', 'cairn', 'config.json');
}

/** The file's content; `{}` when there is no file. A file that is not a JSON object is bad input (exit 2). */
export function loadClientConfig(path: string): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    // No file, or no ~/.config directory at all (a path through a plain file): no config.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return {};
    throw new UsageError(undefined, `cannot read client config ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(undefined, `client config ${path} is not valid JSON (${(err as Error).message}); fix or remove it`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(undefined, `client config ${path} must hold a JSON object; fix or remove it`);
  }
  return parsed as ClientConfig;
}

/** Writes the file readable by its owner only (0600, directory 0700), as Velero does. */
export function saveClientConfig(path: string, config: ClientConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function stringValue(config: ClientConfig, key: string): string | undefined {
  const v = config[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function configNamespace(config: ClientConfig): string | undefined {
  return stringValue(config, 'namespace');
}

/** Go's strconv.ParseBool, which Velero uses for `colorized`. */
export function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** Colour is on unless the file says `colorized: false` (Velero: a missing or unreadable value means true). */
export function configColorized(config: ClientConfig): boolean {
  const v = config.colorized;
  if (typeof v === 'boolean') return v;
  return typeof v === 'string' ? (parseGoBool(v) ?? true) : true;
}

export function configFeatures(config: ClientConfig): string[] {
  const v = stringValue(config, 'features');
  return v ? v.split(',').map((f) => f.trim()).filter(Boolean) : [];
}

/** Keys in the file that cairn does not act on (reported as a warning by the commands that read the file). */
export function unusedKeys(config: ClientConfig): string[] {
  return Object.keys(config).filter((k) => !(CLIENT_CONFIG_KEYS as readonly string[]).includes(k)).sort();
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface SetResult {
  config: ClientConfig;
  warnings: string[];
}

/**
 * Applies `KEY=VALUE` arguments (an empty VALUE removes the key, as in Velero). Every argument is checked before
 * anything changes: a malformed pair, a key cairn does not know or a value that is wrong is bad input.
 */
export function applySet(current: ClientConfig, args: string[]): SetResult {
  if (args.length === 0) throw new UsageError('KEY=VALUE', 'at least one KEY=VALUE is required');
  const config: ClientConfig = { ...current };
  const warnings: string[] = [];
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError('KEY=VALUE', `"${arg}" is not KEY=VALUE`);
    const key = arg.slice(0, eq);
    const value = arg.slice(eq + 1);
    if (REFUSED_KEYS[key]) throw new UsageError(key, `not supported: ${REFUSED_KEYS[key]}`);
    if (!(CLIENT_CONFIG_KEYS as readonly string[]).includes(key)) {
      throw new UsageError(key, `unknown key (known: ${CLIENT_CONFIG_KEYS.join(', ')})`);
    }
    if (value === '') {
      delete config[key];
      continue;
    }
    if (key === 'namespace' && (value.length > 63 || !DNS_LABEL.test(value))) {
      throw new UsageError('namespace', `"${value}" is not a valid namespace name (lower-case letters, digits and '-', at most 63)`);
    }
    if (key === 'colorized' && parseGoBool(value) === undefined) {
      throw new UsageError('colorized', `"${value}" is not true or false`);
    }
    if (key === 'features') {
      warnings.push('features: kept for compatibility with velero\'s client config; cairn has no client-side feature flags, so it changes nothing');
    }
    config[key] = value;
  }
  return { config, warnings };
}

/** `get` output, Velero's: `key: value` lines, sorted; a key asked for but not set shows `<NOT SET>`. */
export function formatGet(config: ClientConfig, keys: string[]): string {
  const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
  const wanted = keys.length ? keys : Object.keys(config).sort();
  return wanted.map((k) => `${k}: ${k in config ? show(config[k]) : '<NOT SET>'}`).join('\n');
}
