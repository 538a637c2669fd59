/**
 * The start of go-plugin's protocol, as Velero's plugins speak it. The host runs the binary with the magic cookie
 * in its environment (`VELERO_PLUGIN=hello`: without it the binary says it is a plugin and exits) and the protocol
 * versions it accepts; the plugin listens on a socket and writes one line to stdout:
 *
 *   CORE-PROTOCOL-VERSION|APP-PROTOCOL-VERSION|NETWORK|ADDRESS|PROTOCOL[|SERVER-CERT][|MULTIPLEX]
 *   e.g. 1|2|unix|/tmp/plugin1234567|grpc|
 *
 * Core protocol 1 is go-plugin's; app protocol 2 is Velero's (framework.Handshake()); PROTOCOL must be grpc (Velero
 * serves nothing else). A server certificate appears only with go-plugin's automatic mTLS, which Velero does not use.
 */

export const MAGIC_COOKIE_KEY = 'VELERO_PLUGIN';
export const MAGIC_COOKIE_VALUE = 'hello';
/** go-plugin's own protocol version. */
export const CORE_PROTOCOL_VERSION = 1;
/** Velero's plugin protocol version (unchanged from Velero 1.x up to 1.18). */
export const VELERO_PROTOCOL_VERSION = 2;

export class HandshakeError extends Error {}

export interface PluginAddress {
  network: 'unix' | 'tcp';
  address: string;
}

/** The environment a plugin binary is started with: the host's, plus the handshake's variables. */
export function pluginEnvironment(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...base,
    [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
    // go-plugin's defaults: used only by plugins that listen on TCP (Windows).
    PLUGIN_MIN_PORT: '10000',
    PLUGIN_MAX_PORT: '25000',
    PLUGIN_PROTOCOL_VERSIONS: String(VELERO_PROTOCOL_VERSION),
  };
}

/** Parses the plugin's first stdout line; throws HandshakeError saying what is wrong. */
export function parseHandshakeLine(raw: string): PluginAddress {
  const line = raw.trim();
  const parts = line.split('|');
  if (parts.length < 4) throw new HandshakeError(`unrecognized plugin handshake line: ${JSON.stringify(line.slice(0, 200))}`);
  const [core, app, network, address, protocol = 'netrpc'] = parts as [string, string, string, string, string?];
  if (Number(core) !== CORE_PROTOCOL_VERSION) {
    throw new HandshakeError(`incompatible go-plugin core protocol version ${core} (this host speaks ${CORE_PROTOCOL_VERSION}); the plugin needs rebuilding`);
  }
  if (Number(app) !== VELERO_PROTOCOL_VERSION) {
    throw new HandshakeError(`incompatible Velero plugin protocol version ${app} (this host speaks ${VELERO_PROTOCOL_VERSION})`);
  }
  if (protocol !== 'grpc') throw new HandshakeError(`unsupported plugin protocol "${protocol}" (only grpc)`);
  if (network !== 'unix' && network !== 'tcp') throw new HandshakeError(`unknown plugin address type ${network}`);
  if (!address) throw new HandshakeError('the plugin handshake names no address');
  if ((parts[5]?.length ?? 0) > 50) throw new HandshakeError('the plugin offers automatic mTLS, which Velero plugins do not use');
  return { network, address };
}

/** The gRPC target for a plugin's address. */
export function grpcTarget(addr: PluginAddress): string {
  return addr.network === 'unix' ? `unix:${addr.address}` : addr.address;
}
