/**
 * Velero's plugin services, loaded at run time from the .proto files vendored unchanged in proto/ (Velero's
 * pkg/plugin/proto and go-plugin's host services), so every message is encoded by protobuf's own rules through
 * @grpc/proto-loader, never by hand. Loaded once, on first use: a server without plugins never pays for it.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The gRPC services a Velero plugin binary serves, by the name cairn uses for them. */
export interface PluginServices {
  PluginLister: grpc.ServiceClientConstructor;
  ObjectStore: grpc.ServiceClientConstructor;
  VolumeSnapshotter: grpc.ServiceClientConstructor;
  BackupItemAction: grpc.ServiceClientConstructor;
  BackupItemActionV2: grpc.ServiceClientConstructor;
  RestoreItemAction: grpc.ServiceClientConstructor;
  RestoreItemActionV2: grpc.ServiceClientConstructor;
  DeleteItemAction: grpc.ServiceClientConstructor;
  ItemBlockAction: grpc.ServiceClientConstructor;
  /** go-plugin: the plugin's stdout/stderr written after the handshake. */
  GRPCStdio: grpc.ServiceClientConstructor;
  /** go-plugin: asks the plugin to exit. */
  GRPCController: grpc.ServiceClientConstructor;
}

const VELERO_FILES = [
  'PluginLister.proto',
  'ObjectStore.proto',
  'VolumeSnapshotter.proto',
  'BackupItemAction.proto',
  'RestoreItemAction.proto',
  'DeleteItemAction.proto',
  'backupitemaction/v2/BackupItemAction.proto',
  'restoreitemaction/v2/RestoreItemAction.proto',
  'itemblockaction/v1/ItemBlockAction.proto',
];
const GO_PLUGIN_FILES = ['grpc_stdio.proto', 'grpc_controller.proto'];

const LOAD_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/** The proto/ folder of the package: next to src/ and dist/ (both are two levels below the root here). */
export function protoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'proto', 'velero', 'Shared.proto'))) return join(dir, 'proto');
    dir = dirname(dir);
  }
  throw new Error('the plugin protocol definitions (proto/velero/*.proto) are missing from this installation');
}

type Namespace = Record<string, grpc.ServiceClientConstructor>;

let loaded: PluginServices | undefined;

export function pluginServices(): PluginServices {
  if (loaded) return loaded;
  const root = protoRoot();
  const velero = grpc.loadPackageDefinition(protoLoader.loadSync(VELERO_FILES, { ...LOAD_OPTIONS, includeDirs: [join(root, 'velero')] })) as unknown as {
    generated: Namespace;
    v1: Namespace;
    v2: Namespace;
  };
  const host = grpc.loadPackageDefinition(protoLoader.loadSync(GO_PLUGIN_FILES, { ...LOAD_OPTIONS, includeDirs: [join(root, 'go-plugin')] })) as unknown as {
    plugin: Namespace;
  };
  const pick = (ns: Namespace, name: string): grpc.ServiceClientConstructor => {
    const ctor = ns[name];
    if (!ctor) throw new Error(`service ${name} is missing from the plugin protocol definitions`);
    return ctor;
  };
  loaded = {
    PluginLister: pick(velero.generated, 'PluginLister'),
    ObjectStore: pick(velero.generated, 'ObjectStore'),
    VolumeSnapshotter: pick(velero.generated, 'VolumeSnapshotter'),
    BackupItemAction: pick(velero.generated, 'BackupItemAction'),
    BackupItemActionV2: pick(velero.v2, 'BackupItemAction'),
    RestoreItemAction: pick(velero.generated, 'RestoreItemAction'),
    RestoreItemActionV2: pick(velero.v2, 'RestoreItemAction'),
    DeleteItemAction: pick(velero.generated, 'DeleteItemAction'),
    ItemBlockAction: pick(velero.v1, 'ItemBlockAction'),
    GRPCStdio: pick(host.plugin, 'GRPCStdio'),
    GRPCController: pick(host.plugin, 'GRPCController'),
  };
  return loaded;
}
