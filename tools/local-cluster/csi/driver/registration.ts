/**
 * The kubelet's plugin registration, served by the driver itself on real nodes: the kubelet watches
 * <kubelet-root>/plugins_registry/ for sockets, asks each for its PluginInfo (a CSI plugin, its name, the socket
 * its CSI services are on, the versions it speaks) and reports back whether it registered it. On a real cluster
 * the node-driver-registrar sidecar does this; the Go module proxy reachable here refuses that module, so the
 * test bed's driver answers the same two calls (pluginregistration.Registration, from k8s.io/kubelet's
 * api.proto in the Go module cache).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface RegistrationOptions {
  /** k8s.io/kubelet/pkg/apis/pluginregistration/v1/api.proto */
  protoPath: string;
  /** The kubelet's plugins_registry directory (as this process sees it). */
  registryDir: string;
  driverName: string;
  /** The CSI socket as the kubelet sees it. */
  csiEndpoint: string;
  log: (line: string) => void;
}

export interface RegistrationServer {
  socket: string;
  stop: () => Promise<void>;
}

interface RegistrationPackage {
  pluginregistration: { Registration: grpc.ServiceClientConstructor };
}

export async function serveRegistration(o: RegistrationOptions): Promise<RegistrationServer> {
  const def = protoLoader.loadSync(o.protoPath, { keepCase: true, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as RegistrationPackage;
  const server = new grpc.Server();
  server.addService(pkg.pluginregistration.Registration.service, {
    GetInfo: (_call: grpc.ServerUnaryCall<object, object>, cb: grpc.sendUnaryData<object>) => {
      cb(null, { type: 'CSIPlugin', name: o.driverName, endpoint: o.csiEndpoint, supported_versions: ['1.0.0'] });
    },
    NotifyRegistrationStatus: (call: grpc.ServerUnaryCall<{ plugin_registered: boolean; error: string }, object>, cb: grpc.sendUnaryData<object>) => {
      const s = call.request;
      o.log(s.plugin_registered ? 'registered with the kubelet' : `the kubelet refused the registration: ${s.error}`);
      cb(null, {});
    },
  });
  mkdirSync(o.registryDir, { recursive: true });
  const socket = join(o.registryDir, `${o.driverName}-reg.sock`);
  rmSync(socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  o.log(`registration socket ${socket} (CSI endpoint ${o.csiEndpoint})`);
  return {
    socket,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => {
      rmSync(socket, { force: true });
      resolve();
    })),
  };
}
