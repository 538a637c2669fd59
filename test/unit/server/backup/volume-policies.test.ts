import { describe, expect, it } from 'vitest';
import {
  ResourcePoliciesError,
  anyPolicySnapshots,
  conditionsMatch,
  matchVolumePolicy,
  parseCapacity,
  parseResourcePolicies,
  persistentVolumeFacts,
  podVolumeFacts,
  resourcePoliciesFromConfigMap,
  type VolumeFacts,
} from '../../../../src/server/backup/volume-policies.js';
import { applyVolumePolicies, type PodLike } from '../../../../src/server/podvolume/backup-volumes.js';
import { combineScopedFilters } from '../../../../src/server/backup/filters.js';
import { thrownBy } from '../../../support/thrown.js';

const SOURCE = 'ConfigMap velero/policies';
const parse = (text: string) => parseResourcePolicies(text, SOURCE);
const problem = (text: string) => thrownBy(ResourcePoliciesError, () => parse(text))?.message;

const pv = (spec: Record<string, unknown>) => ({ spec: { capacity: { storage: '10Gi' }, storageClassName: 'gp3', ...spec } });
const csiPv = pv({ csi: { driver: 'ebs.csi.aws.com', volumeAttributes: { encrypted: 'true', tier: 'gold' } } });
const facts = (over: Partial<VolumeFacts> = {}): VolumeFacts => ({ ...persistentVolumeFacts(csiPv, { metadata: { labels: { app: 'db' } }, status: { phase: 'Bound' } }), ...over });
const matches = (conditions: string, v: VolumeFacts = facts()) =>
  conditionsMatch(parse(`version: v1\nvolumePolicies:\n- conditions:\n${conditions.replace(/^/gm, '    ')}\n  action: {type: skip}\n`).volumePolicies[0]!.conditions, v);

describe('parsing resource policies (Velero format v1)', () => {
  it('reads volume policies with every condition and the three actions, and the include/exclude policy', () => {
    const p = parse(`version: v1
volumePolicies:
- conditions:
    capacity: "0,100Gi"
    storageClass: [gp3, standard]
    csi: {driver: ebs.csi.aws.com, volumeAttributes: {encrypted: "true"}}
    pvcLabels: {app: db}
    pvcPhase: [Bound]
  action:
    type: snapshot
- conditions:
    nfs: {server: 10.0.0.1, path: /export}
    volumeTypes: [nfs, emptyDir]
  action: {type: fs-backup}
- conditions: {}
  action: {type: skip, parameters: {reason: scratch}}
includeExcludePolicy:
  includedClusterScopedResources: [storageclasses]
  excludedNamespaceScopedResources: [secrets]
`);
    expect(p.volumePolicies.map((v) => [v.index, v.action.type])).toEqual([
      [1, 'snapshot'],
      [2, 'fs-backup'],
      [3, 'skip'],
    ]);
    expect(p.volumePolicies[0]?.conditions).toEqual({
      capacity: { lower: 0, upper: 100 * 2 ** 30 },
      storageClass: ['gp3', 'standard'],
      csi: { driver: 'ebs.csi.aws.com', volumeAttributes: { encrypted: 'true' } },
      pvcLabels: { app: 'db' },
      pvcPhase: ['Bound'],
    });
    expect(p.volumePolicies[2]?.action.parameters).toEqual({ reason: 'scratch' });
    expect(p.includeExcludePolicy).toEqual({
      includedClusterScopedResources: ['storageclasses'],
      excludedClusterScopedResources: [],
      includedNamespaceScopedResources: [],
      excludedNamespaceScopedResources: ['secrets'],
    });
    expect(anyPolicySnapshots(p)).toBe(true);
  });

  it('refuses what Velero refuses, naming the line', () => {
    expect(problem('version: v2\nvolumePolicies: []\n')).toBe('incompatible version number v2 with supported version v1 (line 1)');
    expect(problem('volumePolicies: []\n')).toMatch(/^incompatible version number \(none\)/);
    expect(problem('version: v1\nvolumePolicy: []\n')).toBe('unknown field "volumePolicy" in the resource policies (known: version, volumePolicies, includeExcludePolicy) (line 2)');
    expect(problem('version: v1\nvolumePolicies:\n- conditions:\n    size: 10Gi\n  action: {type: skip}\n')).toMatch(/^unknown field "size" in volumePolicies\[0\]\.conditions .*\(line 4\)$/);
    expect(problem('version: v1\nvolumePolicies:\n- conditions: {}\n  action: {type: delete}\n')).toBe('invalid action type delete in volumePolicies[0] (one of skip, fs-backup, snapshot) (line 4)');
    expect(problem('version: v1\nvolumePolicies:\n- conditions: {capacity: "100Gi,10Gi"}\n  action: {type: skip}\n')).toMatch(/illegal values for capacity "100Gi,10Gi".*\(line 3\)$/);
    expect(problem('version: v1\nvolumePolicies:\n- conditions: {capacity: "10Gi"}\n  action: {type: skip}\n')).toMatch(/wrong format of capacity "10Gi"/);
    expect(problem('version: v1\nvolumePolicies:\n- conditions: {csi: {volumeAttributes: {a: b}}}\n  action: {type: skip}\n')).toMatch(/csi driver must be given when filtering by volume attributes/);
    expect(problem('version: v1\nvolumePolicies:\n- conditions: {pvcLabels: [a]}\n  action: {type: skip}\n')).toMatch(/pvcLabels must be a map of string to string/);
    expect(problem('version: v1\nvolumePolicies:\n- conditions: {}\n')).toMatch(/volumePolicies\[0\] has no action \(line 3\)/);
    expect(problem('version: v1\nincludeExcludePolicy:\n  includedClusterScopedResources: ["*"]\n')).toMatch(/cannot use '\*' in includes or excludes/);
    expect(problem('version: v1\nincludeExcludePolicy:\n  includedNamespaceScopedResources: [secrets]\n  excludedNamespaceScopedResources: [secrets]\n')).toMatch(/excludes list cannot contain an item in the includes list: secrets/);
  });

  it('YAML that does not parse: the parser error with its line', () => {
    expect(problem('version: v1\nvolumePolicies: [\n')).toMatch(/^invalid YAML: .* at line 3, column 1:$/);
    expect(problem('version: v1\nversion: v1\n')).toMatch(/^invalid YAML: Map keys must be unique at line 2/);
  });

  it('a ConfigMap must hold exactly one key', () => {
    const cm = (data: Record<string, string>) => ({ metadata: { name: 'policies', namespace: 'velero' }, data });
    expect(() => resourcePoliciesFromConfigMap(cm({}))).toThrow('ConfigMap velero/policies must have exactly one data key holding the policies (it has 0)');
    expect(() => resourcePoliciesFromConfigMap(cm({ a: 'version: v1', b: 'version: v1' }))).toThrow(/it has 2/);
    expect(() => resourcePoliciesFromConfigMap(cm({ 'policy.yaml': 'version: v9' }))).toThrow('ConfigMap velero/policies, key policy.yaml: incompatible version number v9 with supported version v1 (line 1)');
    expect(resourcePoliciesFromConfigMap(cm({ 'policy.yaml': 'version: v1' })).source).toBe(SOURCE);
  });
});

describe('each condition', () => {
  it('capacity: "<lower>,<upper>", either bound may be left out', () => {
    expect(parseCapacity('10Gi,100Gi')).toEqual({ lower: 10 * 2 ** 30, upper: 100 * 2 ** 30 });
    expect(matches('capacity: "10Gi,100Gi"')).toBe(true);
    expect(matches('capacity: "0,5Gi"')).toBe(false);
    expect(matches('capacity: ",10Gi"')).toBe(true);
    expect(matches('capacity: "11Gi,"')).toBe(false);
    expect(matches('capacity: "1G,"')).toBe(true);
  });

  it('storageClass: one of the list', () => {
    expect(matches('storageClass: [standard, gp3]')).toBe(true);
    expect(matches('storageClass: [standard]')).toBe(false);
    expect(matches('storageClass: [gp3]', facts({ storageClass: '' }))).toBe(false);
  });

  it('csi: any CSI volume, a driver, and volume attributes', () => {
    expect(matches('csi: {}')).toBe(true);
    expect(matches('csi: {driver: ebs.csi.aws.com}')).toBe(true);
    expect(matches('csi: {driver: other.csi}')).toBe(false);
    expect(matches('csi: {driver: ebs.csi.aws.com, volumeAttributes: {tier: gold}}')).toBe(true);
    expect(matches('csi: {driver: ebs.csi.aws.com, volumeAttributes: {tier: silver}}')).toBe(false);
    expect(matches('csi: {}', persistentVolumeFacts(pv({ nfs: { server: 's', path: '/p' } })))).toBe(false);
  });

  it('nfs: any NFS volume, a server, a path', () => {
    const nfs = persistentVolumeFacts(pv({ nfs: { server: '10.0.0.1', path: '/export' } }));
    expect(matches('nfs: {}', nfs)).toBe(true);
    expect(matches('nfs: {server: 10.0.0.1}', nfs)).toBe(true);
    expect(matches('nfs: {path: /export}', nfs)).toBe(true);
    expect(matches('nfs: {server: 10.0.0.2, path: /export}', nfs)).toBe(false);
    expect(matches('nfs: {}')).toBe(false);
  });

  it('volumeTypes: the volume source (PV or pod volume)', () => {
    expect(matches('volumeTypes: [csi]')).toBe(true);
    expect(matches('volumeTypes: [emptyDir]', podVolumeFacts({ name: 'tmp', emptyDir: {} }))).toBe(true);
    expect(matches('volumeTypes: [emptyDir]')).toBe(false);
    expect(persistentVolumeFacts(pv({ hostPath: { path: '/x' } })).volumeType).toBe('hostPath');
    expect(persistentVolumeFacts(pv({ local: { path: '/x' } })).volumeType).toBe('local');
    expect(podVolumeFacts({ name: 'c', configMap: { name: 'x' } }).volumeType).toBe('configMap');
  });

  it("pvcLabels: every label given, on the volume's claim", () => {
    expect(matches('pvcLabels: {app: db}')).toBe(true);
    expect(matches('pvcLabels: {app: web}')).toBe(false);
    expect(matches('pvcLabels: {app: db}', podVolumeFacts({ name: 'tmp', emptyDir: {} }))).toBe(false);
  });

  it("pvcPhase: the claim's phase", () => {
    expect(matches('pvcPhase: [Bound, Pending]')).toBe(true);
    expect(matches('pvcPhase: [Pending]')).toBe(false);
  });

  it('all given conditions must match', () => {
    expect(matches('storageClass: [gp3]\ncsi: {driver: other.csi}')).toBe(false);
    expect(matches('storageClass: [gp3]\npvcLabels: {app: db}')).toBe(true);
  });
});

describe('first match wins', () => {
  const policies = parse(`version: v1
volumePolicies:
- conditions: {storageClass: [gp3], pvcLabels: {app: db}}
  action: {type: snapshot}
- conditions: {csi: {}}
  action: {type: fs-backup}
- conditions: {volumeTypes: [emptyDir]}
  action: {type: skip}
`);

  it('the first policy whose conditions all match gives the action, named for messages', () => {
    expect(matchVolumePolicy(policies, facts())).toEqual({ action: 'snapshot', policy: 'volume policy #1 of ConfigMap velero/policies' });
    expect(matchVolumePolicy(policies, facts({ pvcLabels: { app: 'web' } }))).toEqual({ action: 'fs-backup', policy: 'volume policy #2 of ConfigMap velero/policies' });
    expect(matchVolumePolicy(policies, podVolumeFacts({ name: 'tmp', emptyDir: {} }))?.action).toBe('skip');
    expect(matchVolumePolicy(policies, persistentVolumeFacts(pv({ hostPath: { path: '/x' } })))).toBeUndefined();
  });

  it('pod volumes: a policy decides before the annotations; unmatched volumes follow the annotations', () => {
    const pod: PodLike = {
      metadata: { name: 'db', namespace: 'shop', annotations: { 'backup.velero.io/backup-volumes': 'data,tmp' } },
      spec: {
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'tmp', emptyDir: {} },
          { name: 'cache', persistentVolumeClaim: { claimName: 'cache' } },
          { name: 'logs', hostPath: { path: '/var/log' } },
        ],
      },
    };
    const claim = (name: string, labels: Record<string, string>) => ({
      pvc: { metadata: { name, namespace: 'shop', labels }, status: { phase: 'Bound' } },
      pv: { metadata: { name: `pv-${name}` }, spec: { csi: { driver: 'ebs.csi.aws.com' }, storageClassName: 'gp3', capacity: { storage: '1Gi' } } },
    });
    const claims = new Map([
      ['data', claim('data', { app: 'db' })],
      ['cache', claim('cache', {})],
    ]);
    const out = applyVolumePolicies({ pod, legacyWanted: ['data', 'tmp'], policies, claims });
    // data: policy #1 snapshot (the annotation asked for fs-backup); cache: policy #2 fs-backup (not annotated);
    // tmp: policy #3 skip (annotated); logs: no policy, not annotated.
    expect(out.wanted).toEqual(['cache']);
    expect(out.redirected.map((r) => [r.volume, r.reason])).toEqual([
      ['data', 'volume data of pod shop/db is not backed up by fs-backup: volume policy #1 of ConfigMap velero/policies has the action snapshot'],
      ['tmp', 'volume tmp of pod shop/db is not backed up by fs-backup: volume policy #3 of ConfigMap velero/policies has the action skip'],
    ]);
    expect([...out.verdicts.keys()]).toEqual(['data', 'tmp', 'cache']);
  });
});

describe("the include/exclude policy joins the spec's scoped filters (the spec wins)", () => {
  const empty = { includedClusterScopedResources: [], excludedClusterScopedResources: [], includedNamespaceScopedResources: [], excludedNamespaceScopedResources: [] };
  it('adds entries the spec does not mention, never one the spec includes or excludes', () => {
    const spec = { ...empty, includedNamespaceScopedResources: ['configmaps'], excludedClusterScopedResources: ['storageclasses'] };
    const policy = { ...empty, excludedNamespaceScopedResources: ['configmaps', 'secrets'], includedClusterScopedResources: ['storageclasses', 'persistentvolumes'] };
    expect(combineScopedFilters(spec, policy)).toEqual({
      includedClusterScopedResources: ['persistentvolumes'],
      excludedClusterScopedResources: ['storageclasses'],
      includedNamespaceScopedResources: ['configmaps'],
      excludedNamespaceScopedResources: ['secrets'],
    });
    expect(combineScopedFilters({ ...empty, includedNamespaceScopedResources: ['*'] }, { ...empty, excludedNamespaceScopedResources: ['secrets'] }).excludedNamespaceScopedResources).toEqual([]);
  });
});
