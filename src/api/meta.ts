/**
 * Object metadata and the per-kind definition record (names, versions, printer columns) that both the CRD
 * generator and the validators read.
 */
import { Type, type Static, type TLiteral, type TObject, type TOptional, type TSchema } from '@sinclair/typebox';
import { Group, V1 } from './constants.js';
import { StringMap } from './schema.js';

export const OwnerReference = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  name: Type.String(),
  uid: Type.String(),
  controller: Type.Optional(Type.Boolean()),
  blockOwnerDeletion: Type.Optional(Type.Boolean()),
});
export type OwnerReference = Static<typeof OwnerReference>;

/**
 * metav1.ObjectMeta, as much as cairn reads. The CRD declares metadata as a plain object (the API server owns
 * its schema); this schema only checks what comes back from the cluster or from storage.
 *
 * creationTimestamp, deletionTimestamp and managedFields are deliberately not typed here: @kubernetes/client-node
 * types them as Date / V1ManagedFieldsEntry while the JSON holds strings, so declaring them either way would make
 * these objects unusable with its KubernetesObject type or lie about the runtime value. Read the timestamps with
 * `creationTimestampOf()` / `deletionTimestampOf()`, which accept both forms.
 */
export const ObjectMeta = Type.Object({
  name: Type.Optional(Type.String()),
  generateName: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(Type.Integer()),
  deletionGracePeriodSeconds: Type.Optional(Type.Integer()),
  labels: Type.Optional(StringMap()),
  annotations: Type.Optional(StringMap()),
  finalizers: Type.Optional(Type.Array(Type.String())),
  ownerReferences: Type.Optional(Type.Array(OwnerReference)),
});
export type ObjectMeta = Static<typeof ObjectMeta>;

/** One `additionalPrinterColumns` entry of a CRD version. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly format?: string;
  readonly priority?: number;
}

export type ApiVersionOf<V extends string> = `${typeof Group}/${V}`;

/** The schema of a whole object of one kind: typed apiVersion/kind, metadata, spec and optional status. */
export type KindObjectSchema<A extends string, K extends string, S extends TSchema, St extends TSchema> = TObject<{
  apiVersion: TLiteral<A>;
  kind: TLiteral<K>;
  metadata: typeof ObjectMeta;
  spec: S;
  status: TOptional<St>;
}>;

/** Everything the CRD generator and the validators need to know about one kind. */
export interface KindDefinition<
  K extends string = string,
  V extends string = string,
  S extends TSchema = TSchema,
  St extends TSchema = TSchema,
> {
  readonly kind: K;
  readonly group: typeof Group;
  readonly version: V;
  readonly apiVersion: ApiVersionOf<V>;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: `${K}List`;
  readonly shortNames: readonly string[];
  /** One-paragraph description for the CRD (shown by `kubectl explain`). */
  readonly description: string;
  readonly spec: S;
  readonly status: St;
  readonly schema: KindObjectSchema<ApiVersionOf<V>, K, S, St>;
  readonly printerColumns: readonly PrinterColumn[];
  /**
   * Whether Velero's CRD carries `subresources: {}`. None of Velero's CRDs enables the status subresource, so
   * status is written through the main resource (PUT/PATCH of the object), never `/status`.
   */
  readonly emptySubresources: boolean;
  /** Always false: Velero's CRDs have no status subresource (kept explicit for src/kube's ResourceKind). */
  readonly statusSubresource: false;
}

export interface DefineKindOptions<K extends string, V extends string, S extends TSchema, St extends TSchema> {
  kind: K;
  /** Default: v1 (only the data mover kinds are v2alpha1). */
  version?: V;
  /** Default: the kind's plural as Kubernetes spells it (see pluralOf). */
  plural?: string;
  shortNames?: readonly string[];
  description: string;
  spec: S;
  status: St;
  printerColumns?: readonly PrinterColumn[];
  emptySubresources?: boolean;
}

/** The lower-case plural of a kind name: `BackupRepository` → `backuprepositories`, `Backup` → `backups`. */
export function pluralOf(kind: string): string {
  const singular = kind.toLowerCase();
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  return `${singular}s`;
}

export function defineKind<
  const K extends string,
  const V extends string = typeof V1,
  S extends TSchema = TSchema,
  St extends TSchema = TSchema,
>(options: DefineKindOptions<K, V, S, St>): KindDefinition<K, V, S, St> {
  const version = options.version ?? (V1 as V);
  const apiVersion = `${Group}/${version}` as ApiVersionOf<V>;
  const schema = Type.Object({
    apiVersion: Type.Literal(apiVersion),
    kind: Type.Literal(options.kind),
    metadata: ObjectMeta,
    spec: options.spec,
    status: Type.Optional(options.status),
  }) as KindObjectSchema<ApiVersionOf<V>, K, S, St>;
  return {
    kind: options.kind,
    group: Group,
    version,
    apiVersion,
    plural: options.plural ?? pluralOf(options.kind),
    singular: options.kind.toLowerCase(),
    listKind: `${options.kind}List`,
    shortNames: options.shortNames ?? [],
    description: options.description,
    spec: options.spec,
    status: options.status,
    schema,
    printerColumns: options.printerColumns ?? [],
    emptySubresources: options.emptySubresources ?? false,
    statusSubresource: false,
  };
}

/** The printer column every Velero CRD that has columns ends with or includes. */
export const AgeColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function metaTime(obj: { metadata?: object | undefined }, key: 'creationTimestamp' | 'deletionTimestamp'): Date | undefined {
  const value = (obj.metadata as Record<string, unknown> | undefined)?.[key];
  if (value instanceof Date) return value;
  if (typeof value !== 'string' || value === '') return undefined;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

/** metadata.creationTimestamp as a Date, whether the object holds the JSON string or a Date. */
export function creationTimestampOf(obj: { metadata?: object | undefined }): Date | undefined {
  return metaTime(obj, 'creationTimestamp');
}

/** metadata.deletionTimestamp as a Date; set once deletion was requested (finalizers still pending). */
export function deletionTimestampOf(obj: { metadata?: object | undefined }): Date | undefined {
  return metaTime(obj, 'deletionTimestamp');
}
