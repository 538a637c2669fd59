/**
 * Rendering of command results. The same typed result feeds the table and `-o json|yaml`, so the JSON shape
 * is the API scripts rely on (docs/cli.md).
 */
import { stringify as toYaml } from 'yaml';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface Column<T> {
  header: string;
  value: (row: T) => string;
}

/** Velero-style table: upper-case headers, columns separated by at least three spaces, no borders. */
export function formatTable<T>(columns: readonly Column<T>[], rows: readonly T[]): string {
  const cells = rows.map((r) => columns.map((c) => c.value(r)));
  const headers = columns.map((c) => c.header.toUpperCase());
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function formatYaml(value: unknown): string {
  return toYaml(value, { aliasDuplicateObjects: false }).trimEnd();
}

/** A list shaped as Kubernetes lists are, so `-o json` output can be fed back to kubectl. */
export function asList(items: readonly unknown[]): { apiVersion: 'v1'; kind: 'List'; items: readonly unknown[] } {
  return { apiVersion: 'v1', kind: 'List', items };
}

export function render<T>(format: OutputFormat, value: T, table: (v: T) => string): string {
  switch (format) {
    case 'json':
      return formatJson(value);
    case 'yaml':
      return formatYaml(value);
    case 'table':
      return table(value);
  }
}

/** "3m2s"-style age, as kubectl and velero print it. */
export function formatAge(from: Date | string | undefined, now: Date = new Date()): string {
  if (!from) return '<unknown>';
  const start = typeof from === 'string' ? new Date(from) : from;
  let s = Math.max(0, Math.floor((now.getTime() - start.getTime()) / 1000));
  if (s < 120) return `${s}s`;
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  if (d > 0) return h > 0 && d < 10 ? `${d}d${h}h` : `${d}d`;
  if (h > 0) return m > 0 && h < 10 ? `${h}h${m}m` : `${h}h`;
  return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
}
