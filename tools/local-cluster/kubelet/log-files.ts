/**
 * Reading container log files: the tail for `tailLines`/`limitBytes`, the fallback termination message, and the
 * termination message itself with the kubelet's size limits.
 */
import { open, readFile, stat } from 'node:fs/promises';

/** Kubelet limits: a termination message is at most 4096 bytes; the log fallback is the last 80 lines, ≤2048 bytes. */
export const MAX_TERMINATION_MESSAGE_BYTES = 4096;
export const FALLBACK_LOG_LINES = 80;
export const FALLBACK_LOG_BYTES = 2048;

/** Last `maxBytes` of a file (reads only that much). */
export async function readTailBytes(file: string, maxBytes: number): Promise<Buffer> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, maxBytes);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    return buf;
  } finally {
    await fh.close();
  }
}

/** The last `n` lines of `text` (a trailing newline does not count as an empty last line). */
export function lastLines(text: string, n: number): string {
  if (n <= 0) return '';
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const lines = body.split('\n');
  const tail = lines.slice(Math.max(0, lines.length - n)).join('\n');
  return body.length === 0 ? '' : tail + (text.endsWith('\n') ? '\n' : '');
}

export async function terminationMessage(o: {
  terminationLogFile: string;
  logFile: string;
  policy: string | undefined;
  exitCode: number;
}): Promise<string | undefined> {
  const fromFile = await readFile(o.terminationLogFile)
    .then((b) => b.subarray(0, MAX_TERMINATION_MESSAGE_BYTES).toString('utf8'))
    .catch(() => '');
  if (fromFile.length > 0) return fromFile;
  if (o.policy === 'FallbackToLogsOnError' && o.exitCode !== 0) {
    const tail = (await readTailBytes(o.logFile, 64 * 1024)).toString('utf8');
    const lines = lastLines(tail, FALLBACK_LOG_LINES);
    const bytes = Buffer.from(lines);
    const cut = bytes.length > FALLBACK_LOG_BYTES ? bytes.subarray(bytes.length - FALLBACK_LOG_BYTES) : bytes;
    const msg = cut.toString('utf8');
    return msg.length > 0 ? msg : undefined;
  }
  return undefined;
}

export async function fileSize(file: string): Promise<number | undefined> {
  return stat(file).then((s) => s.size).catch(() => undefined);
}
