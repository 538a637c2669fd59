/**
 * Encodings Velero uses in a location: gzip over compact JSON plus a trailing newline (`*.json.gz`, `-results.gz`),
 * pretty-printed JSON for `velero-backup.json`, gzip text for logs.
 */
import { gunzipSync, gzipSync } from 'node:zlib';

export function toJsonGzip(value: unknown): Buffer {
  return gzipSync(Buffer.from(JSON.stringify(value ?? null) + '\n'));
}

export function fromJsonGzip(data: Buffer): unknown {
  return JSON.parse(gunzipSync(data).toString('utf8')) as unknown;
}

export function toPrettyJson(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value, null, 2) + '\n');
}

export function gzipText(text: string): Buffer {
  return gzipSync(Buffer.from(text));
}

export function gunzipText(data: Buffer): string {
  return gunzipSync(data).toString('utf8');
}
