/**
 * The CSI gRPC services (csi.v1 Identity, Controller, Node) loaded at run time from the CSI spec's csi.proto,
 * which the cluster tool copies out of the Go module cache into `<run-dir>/csi/csi.proto` (never committed).
 * Shared by the local kubelet (CSI client) and the test bed's host-path driver (CSI server).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { join } from 'node:path';

export interface CsiServices {
  Identity: grpc.ServiceClientConstructor;
  Controller: grpc.ServiceClientConstructor;
  Node: grpc.ServiceClientConstructor;
}

/** Where the cluster tool puts csi.proto for a run directory. */
export function csiProtoPath(runDir: string): string {
  return join(runDir, 'csi', 'csi.proto');
}

export function loadCsiServices(protoPath: string): CsiServices {
  const def = protoLoader.loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { csi: { v1: CsiServices } };
  return pkg.csi.v1;
}

/** A unary call on a dynamically loaded client, as a promise. */
export function callUnary<Res>(client: grpc.Client, method: string, req: object, timeoutMs = 30_000): Promise<Res> {
  const fn = (client as unknown as Record<string, (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res: Res) => void) => void>)[method];
  if (!fn) return Promise.reject(new Error(`CSI method ${method} is not in csi.proto`));
  return new Promise((resolve, reject) => {
    fn.call(client, req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}
