/**
 * Entry point of the test bed's CSI host-path driver (image `hostpathplugin`: the local kubelet maps it to this
 * file; on real nodes it is an image of its own, see csi/images.ts):
 *   main.ts --endpoint unix:///csi/csi.sock --nodeid <node> --state-dir <run-dir>/csi/hostpath --proto <csi.proto>
 *           [--registration-dir <kubelet-root>/plugins_registry --registration-proto <api.proto>
 *            --kubelet-endpoint <the CSI socket as the kubelet sees it>]
 * Serves Identity, Controller and Node on the socket until SIGTERM; with --registration-dir also the kubelet's
 * plugin registration (registration.ts), as node-driver-registrar would on a real cluster.
 */
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCsiServices } from '../proto.js';
import { DRIVER_NAME, HostPathDriver } from './hostpath-driver.js';
import { serveRegistration, type RegistrationServer } from './registration.js';

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string', default: 'unix:///csi/csi.sock' },
    nodeid: { type: 'string', default: process.env.NODE_NAME ?? '' },
    'state-dir': { type: 'string' },
    proto: { type: 'string' },
    'registration-dir': { type: 'string' },
    'registration-proto': { type: 'string' },
    'kubelet-endpoint': { type: 'string' },
  },
  strict: true,
});
const log = (line: string) => process.stdout.write(`${new Date().toISOString()} hostpath-driver: ${line}\n`);
if (!values['state-dir'] || !values.proto) {
  process.stderr.write('usage: main.ts --endpoint unix:///path --nodeid NODE --state-dir DIR --proto csi.proto\n');
  process.exit(2);
}
const socket = values.endpoint.replace(/^unix:\/\//, '');
mkdirSync(dirname(socket), { recursive: true });
rmSync(socket, { force: true });
const driver = new HostPathDriver({ services: loadCsiServices(values.proto), stateDir: values['state-dir'], nodeId: values.nodeid, log });
const server = new grpc.Server();
driver.register(server);
server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) {
    log(`cannot listen on ${socket}: ${err.message}`);
    process.exit(1);
  }
  log(`listening on ${socket} (node ${values.nodeid || '-'}, state ${values['state-dir'] ?? ''})`);
  const registryDir = values['registration-dir'];
  if (!registryDir) return;
  serveRegistration({
    protoPath: values['registration-proto'] ?? '',
    registryDir,
    driverName: DRIVER_NAME,
    csiEndpoint: values['kubelet-endpoint'] ?? socket,
    log,
  }).then((r) => {
    registration = r;
  }, (e: unknown) => {
    log(`cannot serve the plugin registration: ${String(e)}`);
    process.exit(1);
  });
});
let registration: RegistrationServer | undefined;
const stop = () => server.tryShutdown(() => {
  rmSync(socket, { force: true });
  void (registration?.stop() ?? Promise.resolve()).then(() => process.exit(0));
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
