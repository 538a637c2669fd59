/**
 * The shapes of the protocol's messages as @grpc/proto-loader hands them over (field names as in the .proto files,
 * 64-bit integers as decimal strings, bytes as Buffers, absent fields as their defaults). Only the types are
 * written here; encoding is protobuf's, from proto/.
 */

/** google.protobuf.Empty and Velero's generated.Empty: no fields. */
export type Empty = Record<string, never>;

export interface ResourceIdentifierMessage {
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

export interface ResourceSelectorMessage {
  includedNamespaces: string[];
  excludedNamespaces: string[];
  includedResources: string[];
  excludedResources: string[];
  selector: string;
}

export interface TimestampMessage {
  seconds: string;
  nanos: number;
}

export interface DurationMessage {
  seconds: string;
  nanos: number;
}

export interface OperationProgressMessage {
  completed: boolean;
  err: string;
  nCompleted: string;
  nTotal: string;
  operationUnits: string;
  description: string;
  started: TimestampMessage | null;
  updated: TimestampMessage | null;
}

export interface PluginIdentifierMessage {
  command: string;
  kind: string;
  name: string;
}

export interface ListPluginsResponse {
  plugins: PluginIdentifierMessage[];
}

export interface AppliesToResponse {
  ResourceSelector: ResourceSelectorMessage | null;
}

export interface BackupExecuteResponse {
  item: Buffer;
  additionalItems: ResourceIdentifierMessage[];
}

export interface BackupExecuteResponseV2 extends BackupExecuteResponse {
  operationID: string;
  postOperationItems: ResourceIdentifierMessage[];
}

export interface RestoreExecuteResponse {
  item: Buffer;
  additionalItems: ResourceIdentifierMessage[];
  skipRestore: boolean;
}

export interface RestoreExecuteResponseV2 extends RestoreExecuteResponse {
  operationID: string;
  waitForAdditionalItems: boolean;
  additionalItemsReadyTimeout: DurationMessage | null;
}

export interface ProgressResponse {
  progress: OperationProgressMessage | null;
}

export interface ItemsReadyResponse {
  ready: boolean;
}

export interface RelatedItemsResponse {
  relatedItems: ResourceIdentifierMessage[];
}

export interface ObjectExistsResponse {
  exists: boolean;
}

export interface BytesMessage {
  data: Buffer;
}

export interface ListCommonPrefixesResponse {
  prefixes: string[];
}

export interface ListObjectsResponse {
  keys: string[];
}

export interface CreateSignedURLResponse {
  url: string;
}

export interface CreateVolumeResponse {
  volumeID: string;
}

export interface GetVolumeInfoResponse {
  volumeType: string;
  iops: string;
}

export interface CreateSnapshotResponse {
  snapshotID: string;
}

export interface GetVolumeIDResponse {
  volumeID: string;
}

export interface SetVolumeIDResponse {
  persistentVolume: Buffer;
}

export interface StdioData {
  channel: 'INVALID' | 'STDOUT' | 'STDERR';
  data: Buffer;
}

/** A protobuf Timestamp as a Date; undefined for the zero time Go sends when none was set. */
export function timestampToDate(t: TimestampMessage | null | undefined): Date | undefined {
  if (!t) return undefined;
  const seconds = Number(t.seconds);
  // Go's zero time.Time (year 1) marshals to -62135596800 seconds: "not set".
  if (!Number.isFinite(seconds) || seconds <= -62135596800 || (seconds === 0 && !t.nanos)) return undefined;
  return new Date(seconds * 1000 + Math.floor((t.nanos ?? 0) / 1e6));
}

/** A protobuf Duration in milliseconds. */
export function durationToMs(d: DurationMessage | null | undefined): number {
  if (!d) return 0;
  return Number(d.seconds) * 1000 + Math.floor((d.nanos ?? 0) / 1e6);
}
