/**
 * TypeBox building blocks shared by every velero.io kind. Each helper produces a schema that means the same thing
 * in all three places it is used: the TypeScript type (`Static<>`), the runtime checker, and the CRD's
 * openAPIV3Schema (see crd-schema.ts for the conversion rules).
 */
import {
  FormatRegistry,
  Kind,
  Type,
  type SchemaOptions,
  type TLiteral,
  type TNull,
  type TSchema,
  type TString,
  type TUnion,
} from '@sinclair/typebox';
import { isGoDuration } from './duration.js';

/** Formats the runtime checker must know; the CRD keeps the Kubernetes ones and drops `go-duration`. */
export const Formats = {
  DateTime: 'date-time',
  Byte: 'byte',
  GoDuration: 'go-duration',
} as const;

// RFC 3339 as Kubernetes writes metav1.Time ("2024-05-01T10:00:00Z"); fractional seconds and offsets allowed.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function registerFormats(): void {
  if (!FormatRegistry.Has(Formats.DateTime)) {
    FormatRegistry.Set(Formats.DateTime, (v) => RFC3339.test(v) && !Number.isNaN(Date.parse(v)));
  }
  if (!FormatRegistry.Has(Formats.Byte)) FormatRegistry.Set(Formats.Byte, (v) => BASE64.test(v));
  if (!FormatRegistry.Has(Formats.GoDuration)) FormatRegistry.Set(Formats.GoDuration, isGoDuration);
}
registerFormats();

/** A schema whose static type is exactly the union of `values`; checked as a union of literals. */
export interface TStringEnum<V extends string> extends TSchema {
  [Kind]: 'Union';
  static: V;
  anyOf: TLiteral<V>[];
}

/** A closed set of strings (a phase, a mode): `enum` in the CRD. */
export function StringEnum<const V extends readonly [string, ...string[]]>(
  values: V,
  options?: SchemaOptions,
): TStringEnum<V[number]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TStringEnum<V[number]>;
}

/**
 * `{ New: 'New', ... }` from `['New', ...]`, so code writes `BackupPhase.Completed` instead of a loose string
 * while the array keeps Velero's enum order for the CRD.
 */
export function namedValues<const V extends readonly string[]>(values: V): { readonly [K in V[number]]: K } {
  return Object.freeze(Object.fromEntries(values.map((v) => [v, v]))) as { readonly [K in V[number]]: K };
}

/** `T | null`: `nullable: true` in the CRD, as Go pointers and nil slices/maps serialize to null. */
export function Nullable<T extends TSchema>(schema: T, options?: SchemaOptions): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()], options);
}

/** A metav1.Time: RFC 3339 string, nullable like Velero's CRDs. */
export function Timestamp(options?: SchemaOptions): TUnion<[TString, TNull]> {
  return Nullable(Type.String({ format: Formats.DateTime }), options);
}

/** A metav1.Duration as Go prints it ("720h0m0s", "30m", "1h30m"). */
export function Duration(options?: SchemaOptions): TString {
  return Type.String({ ...options, format: Formats.GoDuration });
}

/** map[string]string (`additionalProperties: {type: string}` in the CRD). */
export function StringMap(options?: SchemaOptions) {
  return Type.Record(Type.String(), Type.String(), options);
}

/** A 64-bit integer counter (bytes). JSON numbers are exact up to 2^53, enough for any volume. */
export function Int64(options?: SchemaOptions) {
  return Type.Integer({ ...options, format: 'int64' });
}

/** An object whose contents the API server keeps as they are (raw Kubernetes objects we do not model). */
export function FreeForm(options?: SchemaOptions) {
  return Type.Record(Type.String(), Type.Unknown(), { ...options, 'x-kubernetes-preserve-unknown-fields': true });
}

// ---- Kubernetes types that velero.io specs embed -------------------------------------------------------------

const LabelSelectorRequirement = Type.Object({
  key: Type.String(),
  operator: Type.String(),
  values: Type.Optional(Type.Array(Type.String(), { 'x-kubernetes-list-type': 'atomic' })),
});

/** metav1.LabelSelector. */
export const LabelSelector = Type.Object(
  {
    matchLabels: Type.Optional(StringMap()),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirement, { 'x-kubernetes-list-type': 'atomic' })),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

/** corev1.ObjectReference (PodVolumeBackup/Restore `spec.pod`). */
export const ObjectReference = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    fieldPath: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    namespace: Type.Optional(Type.String()),
    resourceVersion: Type.Optional(Type.String()),
    uid: Type.Optional(Type.String()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

/** corev1.SecretKeySelector (credentials of a storage location). */
export const SecretKeySelector = Type.Object(
  {
    key: Type.String({ description: 'The key of the Secret to select from.' }),
    name: Type.Optional(Type.String({ default: '', description: 'Name of the Secret.' })),
    optional: Type.Optional(Type.Boolean()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

/** corev1.TypedLocalObjectReference (resource policy / resource modifier ConfigMaps). */
export const TypedLocalObjectReference = Type.Object(
  {
    apiGroup: Type.Optional(Type.String()),
    kind: Type.String(),
    name: Type.String(),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

/** shared.DataMoveOperationProgress: bytes of a PVB/PVR/DataUpload/DataDownload. */
export const DataMoveOperationProgress = Type.Object({
  totalBytes: Type.Optional(Int64()),
  bytesDone: Type.Optional(Int64()),
});

/** Velero's uploader/repository type enum as the fs-backup CRDs declare it. */
export const UploaderTypes = ['kopia', ''] as const;
export type UploaderType = (typeof UploaderTypes)[number];

/** The phases every data-path CR (PVB, PVR, DataUpload, DataDownload) goes through, in Velero's enum order. */
export const DataPathPhases = [
  'New',
  'Accepted',
  'Prepared',
  'InProgress',
  'Canceling',
  'Canceled',
  'Completed',
  'Failed',
] as const;
export type DataPathPhase = (typeof DataPathPhases)[number];
export const DataPathPhase = namedValues(DataPathPhases);

/** Phases a PVB/PVR/DataUpload/DataDownload never leaves. */
export const DataPathTerminalPhases: readonly DataPathPhase[] = ['Completed', 'Failed', 'Canceled'];
export function isDataPathDone(phase: string | undefined): boolean {
  return (DataPathTerminalPhases as readonly string[]).includes(phase ?? '');
}

/** An optional list of strings that may also be null (Velero's `[]string` fields with `nullable: true`). */
export function NullableStrings(description?: string) {
  return Type.Optional(Nullable(Type.Array(Type.String()), description ? { description } : {}));
}
