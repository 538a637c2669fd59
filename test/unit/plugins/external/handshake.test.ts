import { describe, expect, it } from 'vitest';
import { grpcTarget, HandshakeError, parseHandshakeLine, pluginEnvironment } from '../../../../src/plugins/external/handshake.js';
import { parsePluginLogLine } from '../../../../src/plugins/external/plugin-log.js';
import { pluginNameProblem, qualifiedPluginName } from '../../../../src/plugins/external/kinds.js';

describe('go-plugin handshake', () => {
  it('reads the address a Velero plugin prints', () => {
    expect(parseHandshakeLine('1|2|unix|/tmp/plugin123|grpc|\n')).toEqual({ network: 'unix', address: '/tmp/plugin123' });
    expect(parseHandshakeLine('1|2|tcp|127.0.0.1:10000|grpc')).toEqual({ network: 'tcp', address: '127.0.0.1:10000' });
    expect(grpcTarget({ network: 'unix', address: '/tmp/p' })).toBe('unix:/tmp/p');
  });

  it.each([
    ['This binary is a plugin. These are not meant to be executed directly.', /unrecognized plugin handshake line/],
    ['2|2|unix|/tmp/p|grpc|', /core protocol version 2/],
    ['1|1|unix|/tmp/p|grpc|', /Velero plugin protocol version 1 \(this host speaks 2\)/],
    ['1|2|unix|/tmp/p|netrpc', /unsupported plugin protocol "netrpc"/],
    ['1|2|unix|/tmp/p', /unsupported plugin protocol "netrpc"/],
    ['1|2|pipe|x|grpc|', /unknown plugin address type pipe/],
    [`1|2|unix|/tmp/p|grpc|${'A'.repeat(60)}`, /automatic mTLS/],
  ])('refuses %j', (line, message) => {
    expect(() => parseHandshakeLine(line)).toThrow(HandshakeError);
    expect(() => parseHandshakeLine(line)).toThrow(message);
  });

  it('starts plugins with the magic cookie and the protocol version, keeping the environment', () => {
    const env = pluginEnvironment({ PATH: '/bin', AWS_SHARED_CREDENTIALS_FILE: '/credentials/cloud' });
    expect(env).toMatchObject({ PATH: '/bin', AWS_SHARED_CREDENTIALS_FILE: '/credentials/cloud', VELERO_PLUGIN: 'hello', PLUGIN_PROTOCOL_VERSIONS: '2' });
  });
});

describe('plugin log lines', () => {
  it('reads Velero framework JSON lines (hclog fields)', () => {
    const line = '{"@level":"info","@message":"annotating config map","item":"ns/cm","logSource":"backup.go:60","@logSourceSetBy":"plugin","level":"info"}';
    expect(parsePluginLogLine(line)).toEqual({ level: 'info', message: 'annotating config map', fields: { item: 'ns/cm', logSource: 'backup.go:60' } });
    expect(parsePluginLogLine('{"@level":"warn","@message":"slow"}')?.level).toBe('warn');
    expect(parsePluginLogLine('{"@level":"fatal","@message":"dead"}')?.level).toBe('error');
  });

  it('keeps other lines as they are, at the level their prefix names, else debug', () => {
    expect(parsePluginLogLine('panic: runtime error')).toEqual({ level: 'debug', message: 'panic: runtime error', fields: {} });
    expect(parsePluginLogLine('[WARN] deprecated flag')).toEqual({ level: 'warn', message: '[WARN] deprecated flag', fields: {} });
    expect(parsePluginLogLine('{"not":"hclog"}')).toEqual({ level: 'debug', message: '{"not":"hclog"}', fields: {} });
    expect(parsePluginLogLine('   ')).toBeUndefined();
  });
});

describe('plugin names', () => {
  it('follow Velero rule <DNS subdomain>/<name>', () => {
    expect(pluginNameProblem('velero.io/aws')).toBeUndefined();
    expect(pluginNameProblem('aws')).toMatch(/two parts/);
    expect(pluginNameProblem('Velero.IO/aws')).toMatch(/DNS subdomain/);
    expect(pluginNameProblem('velero.io/')).toMatch(/non-empty/);
    expect(qualifiedPluginName('aws')).toBe('velero.io/aws');
    expect(qualifiedPluginName('example.io/x')).toBe('example.io/x');
  });
});
