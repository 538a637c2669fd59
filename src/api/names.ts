/**
 * Kubernetes name rules and Velero's label-value shortening.
 */
import { createHash } from 'node:crypto';

/** Longest label value (and DNS-1123/1035 label). */
export const MaxLabelValueLength = 63;
/** Longest object name for kinds named by DNS-1123 subdomains (all velero.io kinds, Secrets, ...). */
export const MaxNameLength = 253;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * A label value Velero would write for `name`: unchanged up to 63 bytes, else the first 57 bytes followed by the
 * first 6 hex digits of sha256(name). Selecting by `velero.io/backup-name=<labelValue(name)>` finds what Velero made.
 */
export function labelValue(name: string): string {
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length <= MaxLabelValueLength) return name;
  const hash = createHash('sha256').update(bytes).digest('hex');
  return bytes.subarray(0, MaxLabelValueLength - 6).toString('utf8') + hash.slice(0, 6);
}

/** Velero's name for the same function (pkg/label GetValidName), for readers coming from Velero's code. */
export const getValidName = labelValue;

/**
 * True when `name` is a valid name for a velero.io object (and Secrets, ConfigMaps, ...): a DNS-1123 subdomain,
 * lowercase alphanumerics, '-' and '.', starting and ending alphanumeric, at most 253 characters.
 */
export function isValidName(name: string): boolean {
  return name.length > 0 && name.length <= MaxNameLength && DNS1123_SUBDOMAIN.test(name);
}

/** True for a DNS-1123 label (namespaces, Services, containers): like isValidName but no dots and ≤ 63 chars. */
export function isValidDnsLabel(name: string): boolean {
  return name.length > 0 && name.length <= MaxLabelValueLength && DNS1123_LABEL.test(name);
}

/** True for a valid label value (may be empty). */
export function isValidLabelValue(value: string): boolean {
  return value.length <= MaxLabelValueLength && LABEL_VALUE.test(value);
}

/**
 * Why `name` is not a valid object name, in one line fit for a CLI error, or undefined when it is valid.
 * Example: `"My_Backup" must consist of lower case alphanumeric characters, '-' or '.', and must start and end
 * with an alphanumeric character`.
 */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MaxNameLength) return `"${name.slice(0, 20)}..." must be no more than ${MaxNameLength} characters`;
  if (!DNS1123_SUBDOMAIN.test(name)) {
    return `"${name}" must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`;
  }
  return undefined;
}

/**
 * A label selector string for exact matches, e.g. `selectorFor({ [Labels.BackupName]: labelValue(name) })` →
 * "velero.io/backup-name=nightly-1". Keys are sorted so the same labels always give the same string.
 */
export function selectorFor(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key] ?? ''}`)
    .join(',');
}
