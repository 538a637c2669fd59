/**
 * The generated CRDs against a real kube-apiserver: it accepts every one (it rejects non-structural schemas),
 * they become Established, one object of each kind round-trips unchanged and parses, invalid enum values are
 * rejected by the server, and kubectl shows Velero's printer columns.
 */
import { randomBytes } from 'node:crypto';
import {
  ApiException,
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KindNames,
  Kinds,
  allCrds,
  crdAsClientModel,
  crdFor,
  parse,
  type CustomResourceDefinition,
  type KindName,
} from '../../src/api/index.js';
import { kubeConfig, kubectl } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { validObjects, withField } from '../unit/api/valid-objects.js';

const namespace = `api-crds-${randomBytes(3).toString('hex')}`;

/** The HTTP code and the API server's Status message of a failed request. */
function errorStatus(err: unknown): { code: number | undefined; message: string } {
  if (!(err instanceof ApiException)) return { code: undefined, message: String(err) };
  let body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return { code: err.code, message: body as string };
    }
  }
  const message = (body as { message?: unknown } | undefined)?.message;
  return { code: err.code, message: typeof message === 'string' ? message : JSON.stringify(body) };
}

/**
 * Creates the CRD, or replaces it (same name) so a re-run or an earlier install does not matter; true when it was
 * created here. The body goes through crdAsClientModel, the explicit form for a copy of a CRD.
 */
async function applyCrd(api: ApiextensionsV1Api, crd: CustomResourceDefinition): Promise<boolean> {
  const body: V1CustomResourceDefinition = crdAsClientModel(structuredClone(crd));
  try {
    await api.createCustomResourceDefinition({ body });
    return true;
  } catch (err) {
    if (errorStatus(err).code !== 409) throw err;
    const existing = await api.readCustomResourceDefinition({ name: crd.metadata.name });
    await api.replaceCustomResourceDefinition({
      name: crd.metadata.name,
      body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } },
    });
    return false;
  }
}

/** The kind's sample object in the test namespace, without finalizers (no controller here would remove them). */
function objectIn<K extends KindName>(kind: K) {
  const obj = structuredClone(validObjects[kind]);
  // No finalizers (nothing here would clear them) and no owner references: the garbage collector deletes objects
  // whose owner does not exist, which would make later assertions on them racy.
  const { finalizers: _f, ownerReferences: _o, ...metadata } = obj.metadata;
  obj.metadata = { ...metadata, namespace };
  return obj;
}

describe('velero.io CRDs on a real API server', () => {
  const kc = kubeConfig();
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);

  const createdHere: string[] = [];

  /** Creates `body` as a velero.io/v1 `plural`; returns why the API server refused it, or undefined if it took it. */
  const refusalOf = (plural: string, body: object): Promise<{ code: number | undefined; message: string } | undefined> =>
    custom.createNamespacedCustomObject({ group: 'velero.io', version: 'v1', namespace, plural, body }).then(
      () => undefined,
      (err: unknown) => errorStatus(err),
    );

  beforeAll(async () => {
    for (const crd of allCrds()) if (await applyCrd(extensions, crd)) createdHere.push(crd.metadata.name);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });

  // Leave the shared cluster as found: other tests (install) may expect to create the CRDs themselves.
  afterAll(async () => {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    for (const name of createdHere) await extensions.deleteCustomResourceDefinition({ name }).catch(() => undefined);
    for (const name of createdHere) {
      await waitFor(
        () =>
          extensions.readCustomResourceDefinition({ name }).then(
            () => false,
            (err: unknown) => errorStatus(err).code === 404,
          ),
        { timeoutMs: 60_000, description: `CRD ${name} deleted` },
      );
    }
  });

  it('accepts every CRD and makes it Established with its names', async () => {
    for (const crd of allCrds()) {
      const established = await waitFor(
        async () => {
          const got = await extensions.readCustomResourceDefinition({ name: crd.metadata.name });
          const conditions = got.status?.conditions ?? [];
          const ok = conditions.some((c) => c.type === 'Established' && c.status === 'True');
          return ok ? got : undefined;
        },
        { timeoutMs: 30_000, description: `CRD ${crd.metadata.name} Established` },
      );
      expect(established.status?.acceptedNames?.kind).toBe(crd.spec.names.kind);
      expect(established.status?.acceptedNames?.shortNames ?? []).toEqual(crd.spec.names.shortNames ?? []);
      const nonStructural = (established.status?.conditions ?? []).find((c) => c.type === 'NonStructuralSchema');
      expect(nonStructural?.status ?? 'False').toBe('False');
      // What the server stored is what was generated: no enum or x-kubernetes-* marker was lost on the way.
      const stored = established.spec.versions[0]?.schema?.openAPIV3Schema;
      expect(stored).toEqual(crdAsClientModel(crd).spec.versions[0]?.schema?.openAPIV3Schema);
    }
  });

  it('takes allCrds() objects as they are through server-side apply (KubernetesObjectApi), losing nothing', async () => {
    const objects = kc.makeApiClient(KubernetesObjectApi);
    // A fresh CRD in a group of its own, so nothing another field manager wrote can mask a dropped field.
    const restore = crdFor('Restore');
    const group = `${namespace}.cairn.test`;
    const crd = { ...restore, metadata: { name: `restores.${group}` }, spec: { ...restore.spec, group } };
    await objects.patch(crd, undefined, undefined, 'api-crds-test', true, PatchStrategy.ServerSideApply);
    try {
      const stored = await extensions.readCustomResourceDefinition({ name: crd.metadata.name });
      const schema = stored.spec.versions[0]?.schema?.openAPIV3Schema;
      expect(schema).toEqual(crdAsClientModel(restore).spec.versions[0]?.schema?.openAPIV3Schema);
      expect(schema?.properties?.status?.properties?.phase?._enum).toContain('PartiallyFailed');
    } finally {
      await extensions.deleteCustomResourceDefinition({ name: crd.metadata.name });
    }
  });

  it.each(KindNames)('stores a %s and gives it back unchanged', async (kind) => {
    const def = Kinds[kind];
    const body = objectIn(kind);
    const target = { group: def.group, version: def.version, namespace, plural: def.plural };
    await waitFor(() => custom.createNamespacedCustomObject({ ...target, body }), {
      timeoutMs: 30_000,
      description: `${kind} created (CRD served)`,
    });
    const got: unknown = await custom.getNamespacedCustomObject({ ...target, name: body.metadata.name ?? '' });
    const parsed = parse(kind, got);
    expect(parsed.spec).toEqual(body.spec);
    expect(parsed.status).toEqual(body.status);
    expect(parsed.metadata.uid).toBeTruthy();
  });

  it('rejects an unknown phase and a restic PVB, naming the field', async () => {
    const backup = withField(objectIn('Backup'), 'status.phase', 'Bogus');
    backup.metadata.name = 'bad-phase';
    const bad = await refusalOf('backups', backup);
    expect(bad?.code, bad?.message).toBe(422);
    expect(bad?.message).toContain('status.phase');
    expect(bad?.message).toContain('Unsupported value: "Bogus"');

    const pvb = withField(objectIn('PodVolumeBackup'), 'spec.uploaderType', 'restic');
    pvb.metadata.name = 'restic-pvb';
    const restic = await refusalOf('podvolumebackups', pvb);
    expect(restic?.code).toBe(422);
    expect(restic?.message).toContain('spec.uploaderType');
  });

  it('rejects a missing required field', async () => {
    const dbr = withField(objectIn('DeleteBackupRequest'), 'spec.backupName', undefined);
    dbr.metadata.name = 'no-backup-name';
    const result = await refusalOf('deletebackuprequests', dbr);
    expect(result?.code).toBe(422);
    expect(result?.message).toContain('spec.backupName');
  });

  it('kubectl shows Velero printer columns and the velero category', async () => {
    const pvb = await kubectl(['get', 'podvolumebackups', '-n', namespace]);
    const header = pvb.stdout.split('\n')[0] ?? '';
    expect(header.split(/\s{2,}/).map((s) => s.trim())).toEqual([
      'NAME', 'STATUS', 'STARTED', 'BYTES DONE', 'TOTAL BYTES', 'STORAGE LOCATION', 'AGE', 'NODE', 'UPLOADER',
    ]);
    expect(pvb.stdout).toContain('nightly-1-x7k2p');
    const bsl = await kubectl(['get', 'bsl', '-n', namespace]);
    expect(bsl.stdout.split('\n')[0]).toMatch(/^NAME\s+PHASE\s+LAST VALIDATED\s+AGE\s+DEFAULT/);
    const all = await kubectl(['get', 'velero', '-n', namespace, '-o', 'name']);
    expect(all.stdout.trim().split('\n')).toHaveLength(KindNames.length);
  });
});
