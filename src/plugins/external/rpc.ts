/**
 * Calls on a plugin's gRPC services with a deadline each, failing with the plugin's own error text, or with its
 * last words when the process dies mid-call (PluginProcess.guard).
 */
import * as grpc from '@grpc/grpc-js';
import type { Readable } from 'node:stream';
import { fromGrpcError, PluginTimeoutError } from './errors.js';
import type { PluginProcess } from './process.js';
import type { PluginServices } from './proto.js';

type UnaryMethod = (req: object, meta: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => grpc.ClientUnaryCall;
type ServerStreamMethod = (req: object, meta: grpc.Metadata, opts: grpc.CallOptions) => grpc.ClientReadableStream<unknown>;
type ClientStreamMethod = (meta: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => grpc.ClientWritableStream<unknown>;

export interface CallTarget {
  proc: PluginProcess;
  service: keyof PluginServices;
  /** The plugin's name, for messages. */
  plugin: string;
  timeoutMs: number;
}

function method<T>(t: CallTarget, name: string): T {
  const client = t.proc.client(t.service) as unknown as Record<string, unknown>;
  const fn = client[name];
  if (typeof fn !== 'function') throw new Error(`${t.service}.${name} is not in the plugin protocol definitions`);
  return (fn as (...a: unknown[]) => unknown).bind(client) as T;
}

export function unary<Res>(t: CallTarget, name: string, req: object): Promise<Res> {
  const call = new Promise<Res>((resolve, reject) => {
    method<UnaryMethod>(t, name)(req, new grpc.Metadata(), { deadline: Date.now() + t.timeoutMs }, (err, res) =>
      err ? reject(fromGrpcError(err, t.plugin, name, t.timeoutMs)) : resolve(res as Res),
    );
  });
  return t.proc.guard(call, `${t.service}.${name}`);
}

/**
 * A server stream (GetObject) read message by message. The time limit is between messages, not for the whole
 * stream: a large object takes as long as it takes while bytes keep coming.
 */
export async function* serverStream<Res>(t: CallTarget, name: string, req: object): AsyncGenerator<Res> {
  const stream = method<ServerStreamMethod>(t, name)(req, new grpc.Metadata(), {});
  const iterator = (stream as unknown as Readable)[Symbol.asyncIterator]();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PluginTimeoutError(`plugin ${t.plugin} sent nothing on ${name} for ${Math.round(t.timeoutMs / 1000)}s`, t.plugin)), t.timeoutMs);
      });
      let next: IteratorResult<unknown>;
      try {
        next = await t.proc.guard(Promise.race([iterator.next(), idle]), `${t.service}.${name}`);
      } catch (err) {
        throw fromGrpcError(err, t.plugin, name, t.timeoutMs);
      } finally {
        clearTimeout(timer);
      }
      if (next.done) return;
      yield next.value as Res;
    }
  } finally {
    stream.cancel();
  }
}

/**
 * A client stream (PutObject): writes each message, waiting for the transport to drain, then the answer. The time
 * limit is between writes and for the final answer.
 */
export async function clientStream<Res>(t: CallTarget, name: string, messages: AsyncIterable<object>): Promise<Res> {
  let answer!: Promise<Res>;
  const stream = await new Promise<grpc.ClientWritableStream<unknown>>((ready) => {
    answer = new Promise<Res>((resolve, reject) => {
      ready(method<ClientStreamMethod>(t, name)(new grpc.Metadata(), {}, (err, res) => (err ? reject(fromGrpcError(err, t.plugin, name, t.timeoutMs)) : resolve(res as Res))));
    });
  });
  answer.catch(() => undefined);
  const guarded = (p: Promise<unknown>) => t.proc.guard(withIdleLimit(p, t, name), `${t.service}.${name}`);
  try {
    for await (const msg of messages) {
      if (!stream.write(msg)) await guarded(Promise.race([new Promise((r) => stream.once('drain', r)), answer]));
    }
    stream.end();
    return (await guarded(answer)) as Res;
  } catch (err) {
    stream.cancel();
    throw err;
  }
}

function withIdleLimit<T>(p: Promise<T>, t: CallTarget, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PluginTimeoutError(`plugin ${t.plugin} did not take ${name} data for ${Math.round(t.timeoutMs / 1000)}s`, t.plugin)), t.timeoutMs);
  });
  return Promise.race([p, idle]).finally(() => clearTimeout(timer));
}
