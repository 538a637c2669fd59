/**
 * Entry point of the test bed's CSI host-path driver (image `hostpathplugin` on the local kubelet):
 *   main.ts --endpoint unix:///csi/csi.sock --nodeid <node> --state-dir <run-dir>/csi/hostpath --proto <csi.proto>
 * Serves Identity, Controller and Node on the socket until SIGTERM.
 */
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCsiServices } from '../proto.js';
import { HostPathDriver } from './hostpath-driver.js';

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string', default: 'unix:///csi/csi.sock' },
    nodeid: { type: 'string', default: process.env.NODE_NAME ?? '' },
    'state-dir': { type: 'string' },
    proto: { type: 'string' },
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
});
const stop = () => server.tryShutdown(() => {
  rmSync(socket, { force: true });
  process.exit(0);
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
