import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  KindNames,
  Kinds,
  Nullable,
  StringEnum,
  allCrds,
  crdFor,
  crdName,
  renderCrdFiles,
  toStructuralSchema,
  type CustomResourceDefinition,
  type KindName,
} from '../../../src/api/index.js';
import { structuralProblems } from './structural.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..', '..');

/** Removes `description` everywhere, to compare shapes without prose. */
function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).filter(([k]) => k !== 'description').map(([k, v]) => [k, withoutDescriptions(v)]),
    );
  }
  return value;
}

describe('CRDs', () => {
  const crds = allCrds();

  it('has one CRD per kind, named <plural>.velero.io', () => {
    expect(crds.map((c) => c.spec.names.kind).sort()).toEqual([...KindNames].sort());
    for (const kind of KindNames) expect(crdFor(kind).metadata.name).toBe(crdName(kind));
    expect(crdName('BackupStorageLocation')).toBe('backupstoragelocations.velero.io');
  });

  it.each(KindNames)('%s is a structural schema the API server accepts', (kind) => {
    const crd = crdFor(kind);
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.group).toBe('velero.io');
    expect(crd.spec.versions).toHaveLength(1);
    const [version] = crd.spec.versions;
    expect(version?.served && version.storage).toBe(true);
    expect(structuralProblems(version?.schema.openAPIV3Schema)).toEqual([]);
    expect(JSON.stringify(crd)).not.toMatch(/"\$ref"|"\$id"|"anyOf"|"oneOf"|"allOf"|"patternProperties"|"go-duration"/);
  });

  it('uses Velero names, versions and short names', () => {
    const names = Object.fromEntries(crds.map((c) => [c.spec.names.kind, c.spec.names]));
    expect(names.BackupStorageLocation?.shortNames).toEqual(['bsl']);
    expect(names.VolumeSnapshotLocation?.shortNames).toEqual(['vsl']);
    expect(names.ServerStatusRequest?.shortNames).toEqual(['ssr']);
    expect(names.Backup?.shortNames).toBeUndefined();
    expect(names.BackupRepository).toMatchObject({
      plural: 'backuprepositories',
      singular: 'backuprepository',
      listKind: 'BackupRepositoryList',
      categories: ['velero'],
    });
    expect(crdFor('DataUpload').spec.versions[0]?.name).toBe('v2alpha1');
    expect(crdFor('DataDownload').spec.versions[0]?.name).toBe('v2alpha1');
    expect(crdFor('Backup').spec.versions[0]?.name).toBe('v1');
  });

  it('never enables the status subresource (Velero writes status through the main resource)', () => {
    for (const crd of crds) expect(crd.spec.versions[0]?.subresources?.status).toBeUndefined();
    const withEmpty = crds.filter((c) => c.spec.versions[0]?.subresources !== undefined).map((c) => c.spec.names.kind);
    expect(withEmpty.sort()).toEqual(
      ['BackupRepository', 'BackupStorageLocation', 'DataDownload', 'DataUpload', 'DeleteBackupRequest',
        'PodVolumeBackup', 'PodVolumeRestore', 'Schedule'].sort(),
    );
  });

  it('declares timestamps, durations, maps and enums as Velero does', () => {
    const backup = crdFor('Backup').spec.versions[0]?.schema.openAPIV3Schema;
    const spec = backup?.properties?.spec?.properties;
    const status = backup?.properties?.status?.properties;
    expect(status?.startTimestamp).toMatchObject({ type: 'string', format: 'date-time', nullable: true });
    expect(spec?.ttl).toMatchObject({ type: 'string' });
    expect(spec?.ttl?.format).toBeUndefined();
    expect(spec?.orderedResources).toMatchObject({ type: 'object', nullable: true, additionalProperties: { type: 'string' } });
    expect(status?.phase?.enum?.[0]).toBe('New');
    expect(spec?.labelSelector?.['x-kubernetes-map-type']).toBe('atomic');
    const restore = crdFor('Restore').spec.versions[0]?.schema.openAPIV3Schema;
    const init = restore?.properties?.spec?.properties?.hooks?.properties?.resources?.items?.properties?.postHooks?.items
      ?.properties?.init?.properties?.initContainers;
    expect(init).toMatchObject({
      type: 'array',
      'x-kubernetes-preserve-unknown-fields': true,
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    });
  });

  it('gives the printer columns of Velero', () => {
    const columns = (kind: KindName) => crdFor(kind).spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name);
    expect(columns('BackupStorageLocation')).toEqual(['Phase', 'Last Validated', 'Age', 'Default']);
    expect(columns('Schedule')).toEqual(['Status', 'Schedule', 'LastBackup', 'Age', 'Paused']);
    expect(columns('BackupRepository')).toEqual(['Age', 'Repository Type']);
    expect(columns('DeleteBackupRequest')).toEqual(['BackupName', 'Status']);
    expect(columns('DataUpload')).toEqual(['Status', 'Started', 'Bytes Done', 'Total Bytes', 'Storage Location', 'Age', 'Node']);
    expect(columns('Backup')).toBeUndefined();
  });
});

describe('PodVolumeBackup / PodVolumeRestore CRDs match Velero 1.17 (its fs-backup micro service design)', () => {
  const seed = JSON.parse(readFileSync(join(here, 'seed-000-podvolume-crds.json'), 'utf8')) as Record<
    'pvb' | 'pvr',
    {
      names: object;
      scope: string;
      version: string;
      served: boolean;
      storage: boolean;
      subresources: object;
      additionalPrinterColumns: object[];
      schema: object;
    }
  >;
  const cases: [KindName, 'pvb' | 'pvr'][] = [
    ['PodVolumeBackup', 'pvb'],
    ['PodVolumeRestore', 'pvr'],
  ];

  it.each(cases)('%s printer columns equal the seed, in order', (kind, key) => {
    expect(crdFor(kind).spec.versions[0]?.additionalPrinterColumns).toEqual(seed[key].additionalPrinterColumns);
  });

  it.each(cases)('%s fields, enums, required lists and formats equal the seed', (kind, key) => {
    const crd: CustomResourceDefinition = crdFor(kind);
    const version = crd.spec.versions[0];
    expect(withoutDescriptions(version?.schema.openAPIV3Schema)).toEqual(seed[key].schema);
    const { categories: _c, ...names } = crd.spec.names;
    expect(names).toEqual(seed[key].names);
    expect(crd.spec.scope).toBe(seed[key].scope);
    expect(version).toMatchObject({
      name: seed[key].version,
      served: seed[key].served,
      storage: seed[key].storage,
      subresources: seed[key].subresources,
    });
  });
});

describe('committed CRD manifests', () => {
  it.each(renderCrdFiles().map((f) => [f.path, f] as const))('%s is up to date (run npm run generate:crds)', (path, file) => {
    const committed = readFileSync(join(repoRoot, path), 'utf8');
    expect(committed).toBe(file.content);
    expect(parseYaml(committed)).toEqual(crdFor(file.kind));
  });

  it('covers every kind under config/crd/<version>/bases', () => {
    const files = renderCrdFiles();
    expect(files.map((f) => f.kind).sort()).toEqual([...KindNames].sort());
    for (const f of files) expect(f.path).toBe(`config/crd/${Kinds[f.kind].version}/bases/velero.io_${Kinds[f.kind].plural}.yaml`);
  });
});

describe('TypeBox → structural schema conversion', () => {
  it('turns literal unions into enums and T | null into nullable', () => {
    expect(toStructuralSchema(StringEnum(['a', 'b']))).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(toStructuralSchema(Nullable(Type.Integer(), { description: 'n' }))).toEqual({
      type: 'integer',
      nullable: true,
      description: 'n',
    });
    expect(toStructuralSchema(Type.Record(Type.String(), Type.Boolean()))).toEqual({
      type: 'object',
      additionalProperties: { type: 'boolean' },
    });
    expect(toStructuralSchema(Type.Unknown())).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('refuses unions the API server cannot express', () => {
    expect(() => toStructuralSchema(Type.Union([Type.String(), Type.Integer()]), 'spec.x')).toThrow(/spec\.x: a union/);
  });

  it('the structural checker catches what the API server rejects', () => {
    expect(structuralProblems({ type: 'object', properties: { a: {} } })).toEqual([
      'openAPIV3Schema.properties.a: no type (and not preserve-unknown-fields)',
    ]);
    expect(structuralProblems({ type: 'object', properties: { a: { anyOf: [{ type: 'string' }] } } })).toContain(
      'openAPIV3Schema.properties.a: keyword "anyOf" is not allowed in a CRD schema',
    );
    expect(structuralProblems({ type: 'object', properties: { metadata: { type: 'object', properties: {} } } })).toEqual([
      'openAPIV3Schema.metadata: may only be {type: object}',
    ]);
  });
});
