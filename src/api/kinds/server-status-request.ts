/** velero.io/v1 ServerStatusRequest (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { Nullable, StringEnum, Timestamp, namedValues } from '../schema.js';

export const ServerStatusRequestPhases = ['New', 'Processed'] as const;
export const ServerStatusRequestPhase = namedValues(ServerStatusRequestPhases);
export type ServerStatusRequestPhase = (typeof ServerStatusRequestPhases)[number];

export const PluginInfo = Type.Object({
  name: Type.String(),
  kind: Type.String(),
});
export type PluginInfo = Static<typeof PluginInfo>;

export const ServerStatusRequestSpec = Type.Object({}, { description: 'Empty: the request has no parameters.' });
export type ServerStatusRequestSpec = Static<typeof ServerStatusRequestSpec>;

export const ServerStatusRequestStatus = Type.Object({
  phase: Type.Optional(StringEnum(ServerStatusRequestPhases)),
  processedTimestamp: Type.Optional(Timestamp()),
  serverVersion: Type.Optional(Type.String()),
  plugins: Type.Optional(Nullable(Type.Array(PluginInfo))),
});
export type ServerStatusRequestStatus = Static<typeof ServerStatusRequestStatus>;

export const ServerStatusRequestKind = defineKind({
  kind: 'ServerStatusRequest',
  shortNames: ['ssr'],
  description: 'A ServerStatusRequest asks the running server for its version and plugins.',
  spec: ServerStatusRequestSpec,
  status: ServerStatusRequestStatus,
});
export type ServerStatusRequest = Static<typeof ServerStatusRequestKind.schema>;
