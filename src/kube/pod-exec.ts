/**
 * Runs a command in a container through the API server's `pods/exec` (client-node's Exec, WebSocket), collecting
 * stdout and stderr, with a deadline. This is how hooks run: the server needs RBAC `create` and `get` on `pods/exec` (the WebSocket upgrade is a GET).
 * On timeout the connection is closed; like Velero's executor it cannot stop the process in the container, which
 * may go on running.
 */
import { Writable } from 'node:stream';
import { Exec, type V1Status } from '@kubernetes/client-node';
import type { Kube } from './client.js';

/** At most this much of each stream is kept (the rest is counted, not stored): hook output goes to logs. */
export const MAX_EXEC_OUTPUT_BYTES = 256 * 1024;

export interface ExecRequest {
  namespace: string;
  pod: string;
  container: string;
  command: readonly string[];
  timeoutMs: number;
}

export interface ExecResult {
  /** 0 when the command succeeded. */
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Bytes dropped beyond MAX_EXEC_OUTPUT_BYTES (both streams). */
  truncatedBytes: number;
}

/** The command did not end in time, or could not be run at all (no such pod or container, exec refused...). */
export class ExecError extends Error {}

/** A function that runs one command in a container: the real one below, or a fake in tests. */
export type PodExecutor = (req: ExecRequest) => Promise<ExecResult>;

class Collector extends Writable {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  dropped = 0;

  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    const room = MAX_EXEC_OUTPUT_BYTES - this.size;
    if (room > 0) {
      const kept = chunk.subarray(0, room);
      this.chunks.push(kept);
      this.size += kept.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
    done();
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** The exit code a `pods/exec` status reports: 0 on Success, the ExitCode cause on a non-zero exit. */
export function exitCodeOf(status: V1Status): number | undefined {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const code = cause?.message !== undefined ? Number(cause.message) : NaN;
  return Number.isInteger(code) ? code : undefined;
}

export function podExecutor(kube: Kube): PodExecutor {
  return (req) => execInContainer(kube, req);
}

export async function execInContainer(kube: Kube, req: ExecRequest): Promise<ExecResult> {
  const stdout = new Collector();
  const stderr = new Collector();
  const exec = new Exec(kube.config);
  return new Promise<ExecResult>((resolve, reject) => {
    let settled = false;
    let socket: { close(): void } | undefined;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.close();
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(new ExecError(`timed out after ${formatSeconds(req.timeoutMs)}`))), req.timeoutMs);
    const onStatus = (status: V1Status) => {
      const exitCode = exitCodeOf(status);
      const result = () => ({ stdout: stdout.text(), stderr: stderr.text(), truncatedBytes: stdout.dropped + stderr.dropped });
      if (exitCode === undefined) finish(() => reject(new ExecError(status.message || `exec failed: ${status.reason ?? 'unknown reason'}`)));
      // Let the streams' last frames land before reading them.
      else setImmediate(() => finish(() => resolve({ exitCode, ...result() })));
    };
    exec
      .exec(req.namespace, req.pod, req.container, [...req.command], stdout, stderr, null, false, onStatus)
      .then((ws) => {
        socket = ws;
        if (settled) ws.close();
        // A connection that closes without a status (the container went away) is a failure, not a success.
        ws.on('close', () => setImmediate(() => finish(() => reject(new ExecError('the exec connection closed before the command reported its exit status')))));
      })
      .catch((err: unknown) => finish(() => reject(new ExecError(execFailure(err)))));
  });
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** What a failed exec connection says: the API server's status message when there is one. */
function execFailure(err: unknown): string {
  const e = err as { message?: string; body?: unknown; statusCode?: number };
  const body = typeof e.body === 'string' ? e.body : '';
  try {
    const status = JSON.parse(body) as { message?: string };
    if (status.message) return status.message;
  } catch {
    /* not a Status body */
  }
  return e.message ?? String(err);
}
