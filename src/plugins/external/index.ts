/**
 * External plugins: Velero plugin binaries run unchanged (go-plugin's handshake, Velero's gRPC services). See
 * docs/plugins.md for what is supported.
 */
export { PluginKinds, isPluginKind, pluginNameProblem, qualifiedPluginName, type PluginIdentifier, type PluginKind } from './kinds.js';
export { ExternalPlugins, PluginSession, type PluginRuntimeOptions, type SessionOptions } from './session.js';
export { PluginDiscoveryError, discoverPlugins, findPluginBinaries } from './discovery.js';
export { PluginError, PluginCallError, PluginExitedError, PluginStartError, PluginTimeoutError } from './errors.js';
export { externalBackupItemAction, externalDeleteItemAction, externalItemBlockAction, externalRestoreItemAction } from './item-actions.js';
export { ObjectStorePluginClient, PluginObjectStore } from './object-store.js';
export { VolumeSnapshotterPluginClient } from './volume-snapshotter.js';
export { VELERO_PROTOCOL_VERSION } from './handshake.js';
