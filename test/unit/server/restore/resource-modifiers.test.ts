import { describe, expect, it } from 'vitest';
import type { UnstructuredObject } from '../../../../src/plugins/item-actions/types.js';
import {
  ResourceModifiersError,
  applyResourceModifiers,
  groupResourceMatches,
  parseResourceModifiers,
  patchValue,
  resourceModifiersFromConfigMap,
} from '../../../../src/server/restore/resource-modifiers.js';
import { strategicMerge } from '../../../../src/server/restore/strategic-merge.js';
import { thrownBy } from '../../../support/thrown.js';

const SOURCE = 'ConfigMap velero/modifiers';
const parse = (text: string) => parseResourceModifiers(text, SOURCE);
const problem = (text: string) => thrownBy(ResourceModifiersError, () => parse(text))?.message;

const deployment = (): UnstructuredObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web', tier: 'front' } },
  spec: {
    replicas: 3,
    template: {
      spec: {
        containers: [
          { name: 'web', image: 'nginx:1.25', env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80 }] },
          { name: 'sidecar', image: 'busybox' },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
        tolerations: [{ key: 'x', operator: 'Exists' }],
      },
    },
  },
});

describe('parsing resource modifiers (Velero format v1)', () => {
  it('reads rules with every condition and the three patch kinds', () => {
    const m = parse(`version: v1
resourceModifierRules:
- conditions:
    groupResource: deployments.apps
    resourceNameRegex: "^web-.*$"
    namespaces: [shop, blog]
    labelSelector: {matchLabels: {app: web}}
    matches:
    - path: /spec/replicas
      value: "3"
  patches:
  - operation: replace
    path: /spec/replicas
    value: "1"
- conditions: {groupResource: persistentvolumeclaims}
  mergePatches:
  - patchData: |
      {"metadata": {"annotations": {"restored": "yes"}}}
- conditions: {groupResource: pods}
  strategicPatches:
  - patchData: |
      spec:
        containers:
        - name: web
          image: nginx:1.27
`);
    expect(m.rules.map((r) => [r.index, r.conditions.groupResource, Boolean(r.patches), Boolean(r.mergePatches), Boolean(r.strategicPatches)])).toEqual([
      [1, 'deployments.apps', true, false, false],
      [2, 'persistentvolumeclaims', false, true, false],
      [3, 'pods', false, false, true],
    ]);
    expect(m.rules[0]?.patches).toEqual([{ operation: 'replace', path: '/spec/replicas', value: '1' }]);
    expect(m.rules[1]?.mergePatches).toEqual([{ metadata: { annotations: { restored: 'yes' } } }]);
  });

  it('refuses what Velero refuses, naming the line', () => {
    expect(problem('version: v2\nresourceModifierRules: [{conditions: {groupResource: pods}, patches: [{operation: remove, path: /a}]}]\n')).toBe('unsupported resource modifier version v2 (line 1)');
    expect(problem('version: v1\nresourceModifierRules: []\n')).toBe('resource modifier rules cannot be empty (line 2)');
    expect(problem('version: v1\nresourceModifierRules:\n- conditions: {}\n  patches: [{operation: remove, path: /a}]\n')).toMatch(/groupResource cannot be empty \(line 3\)/);
    expect(problem('version: v1\nresourceModifierRules:\n- conditions: {groupResource: pods}\n  patches: [{operation: delete, path: /a}]\n')).toMatch(/unsupported operation delete \(line 4\)/);
    expect(problem('version: v1\nresourceModifierRules:\n- conditions: {groupResource: pods}\n  patches: [{operation: add}]\n')).toMatch(/path cannot be empty/);
    expect(problem('version: v1\nresourceModifierRules:\n- conditions: {groupResource: pods}\n  patches: [{operation: remove, path: /a}]\n  mergePatches: [{patchData: "{}"}]\n')).toMatch(/only one of patches, mergePatches, strategicPatches can be specified \(line 3\)/);
    expect(problem('version: v1\nresourceModifierRules:\n- conditions: {groupResource: pods, kind: Pod}\n  patches: [{operation: remove, path: /a}]\n')).toMatch(/unknown field "kind" in resourceModifierRules\[0\]\.conditions .*\(line 3\)/);
    expect(problem('version: v1\nresourceModifierRules:\n- conditions: {groupResource: pods, resourceNameRegex: "["}\n  patches: [{operation: remove, path: /a}]\n')).toMatch(/resourceNameRegex: Invalid regular expression/);
    expect(problem('version: v1\nresourceModifierRules:\n- conditions: {groupResource: pods}\n  mergePatches: [{patchData: "[1, 2]"}]\n')).toMatch(/patchData must be an object/);
    expect(problem('version: v1\nresourceModifierRules: [\n')).toMatch(/^invalid YAML: /);
  });

  it('a ConfigMap must hold exactly one key; errors name it', () => {
    expect(() => resourceModifiersFromConfigMap({ metadata: { name: 'modifiers', namespace: 'velero' }, data: {} })).toThrow('ConfigMap velero/modifiers must have exactly one data key holding the resource modifiers (it has 0)');
    expect(() => resourceModifiersFromConfigMap({ metadata: { name: 'modifiers', namespace: 'velero' }, data: { 'm.yaml': 'version: v3' } })).toThrow(/^ConfigMap velero\/modifiers, key m\.yaml: unsupported resource modifier version v3/);
  });
});

describe('conditions', () => {
  const rule = (conditions: string) => parse(`version: v1\nresourceModifierRules:\n- conditions: ${conditions}\n  patches: [{operation: replace, path: /spec/replicas, value: "9"}]\n`);
  const applied = (conditions: string, obj = deployment(), gr = 'deployments.apps') => applyResourceModifiers(rule(conditions), obj, gr).applied.length === 1;

  it('groupResource is a glob with "." as separator', () => {
    expect(groupResourceMatches('deployments.apps', 'deployments.apps')).toBe(true);
    expect(groupResourceMatches('*.apps', 'deployments.apps')).toBe(true);
    expect(groupResourceMatches('*', 'deployments.apps')).toBe(false);
    expect(groupResourceMatches('**', 'deployments.apps')).toBe(true);
    expect(groupResourceMatches('pods', 'pods')).toBe(true);
    expect(applied('{groupResource: "*.apps"}')).toBe(true);
    expect(applied('{groupResource: statefulsets.apps}')).toBe(false);
  });

  it('resourceNameRegex, namespaces (globs: "*", "?", "[!...]"), labelSelector', () => {
    expect(applied('{groupResource: deployments.apps, resourceNameRegex: "^web-\\\\d$"}')).toBe(true);
    expect(applied('{groupResource: deployments.apps, resourceNameRegex: "^api"}')).toBe(false);
    expect(applied('{groupResource: deployments.apps, namespaces: [blog, "sh*"]}')).toBe(true);
    expect(applied('{groupResource: deployments.apps, namespaces: [blog]}')).toBe(false);
    expect(applied('{groupResource: deployments.apps, namespaces: ["s?op"]}')).toBe(true);
    expect(applied('{groupResource: deployments.apps, namespaces: ["[!s]hop"]}')).toBe(false);
    expect(applied('{groupResource: deployments.apps, labelSelector: {matchLabels: {tier: front}}}')).toBe(true);
    expect(applied('{groupResource: deployments.apps, labelSelector: {matchExpressions: [{key: app, operator: NotIn, values: [web]}]}}')).toBe(false);
  });

  it('matches: every path holds its value (Velero reads values as JSON where they are); a missing path is no match', () => {
    expect(applied('{groupResource: deployments.apps, matches: [{path: /spec/replicas, value: "3"}, {path: "/spec/template/spec/containers/0/image", value: "nginx:1.25"}]}')).toBe(true);
    expect(applied('{groupResource: deployments.apps, matches: [{path: /spec/replicas, value: "4"}]}')).toBe(false);
    expect(applied('{groupResource: deployments.apps, matches: [{path: /spec/paused, value: "true"}]}')).toBe(false);
  });
});

describe('patches', () => {
  it('JSON Patch: values read as Velero does; several operations in order; a failing test leaves the item as it is', () => {
    expect([patchValue('1'), patchValue('true'), patchValue('null'), patchValue('"1"'), patchValue('{"a":1}'), patchValue('nginx'), patchValue('')]).toEqual([1, true, null, '1', { a: 1 }, 'nginx', '']);
    const m = parse(`version: v1
resourceModifierRules:
- conditions: {groupResource: deployments.apps}
  patches:
  - {operation: replace, path: /spec/replicas, value: "1"}
  - {operation: add, path: /metadata/labels/restored, value: '"true"'}
  - {operation: remove, path: /spec/template/spec/containers/1}
  - {operation: copy, from: /metadata/labels/app, path: /metadata/labels/copied}
  - {operation: move, from: /metadata/labels/tier, path: /metadata/labels/layer}
`);
    const out = applyResourceModifiers(m, deployment(), 'deployments.apps');
    expect(out.errors).toEqual([]);
    expect(out.object.spec).toMatchObject({ replicas: 1 });
    expect((out.object.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers).toHaveLength(1);
    expect(out.object.metadata.labels).toEqual({ app: 'web', restored: 'true', copied: 'web', layer: 'front' });
    const guarded = parse(`version: v1
resourceModifierRules:
- conditions: {groupResource: deployments.apps}
  patches:
  - {operation: test, path: /spec/replicas, value: "5"}
  - {operation: replace, path: /spec/replicas, value: "1"}
`);
    const kept = applyResourceModifiers(guarded, deployment(), 'deployments.apps');
    expect(kept).toMatchObject({ applied: [], errors: [] });
    expect(kept.object.spec).toMatchObject({ replicas: 3 });
  });

  it('a patch that cannot be applied is an error of the item, which keeps its other rules', () => {
    const m = parse(`version: v1
resourceModifierRules:
- conditions: {groupResource: deployments.apps}
  patches: [{operation: remove, path: /spec/nothing}]
- conditions: {groupResource: deployments.apps}
  patches: [{operation: replace, path: /spec/replicas, value: "2"}]
`);
    const out = applyResourceModifiers(m, deployment(), 'deployments.apps');
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatch(/^error applying rule #1 of ConfigMap velero\/modifiers to deployments.apps shop\/web-1: /);
    expect(out.object.spec).toMatchObject({ replicas: 2 });
  });

  it('JSON Merge Patch (RFC 7386): maps merged, null deletes, lists replaced', () => {
    const m = parse(`version: v1
resourceModifierRules:
- conditions: {groupResource: deployments.apps}
  mergePatches:
  - patchData: |
      metadata:
        labels: {tier: null, restored: "yes"}
      spec:
        template:
          spec:
            tolerations: []
`);
    const out = applyResourceModifiers(m, deployment(), 'deployments.apps');
    expect(out.applied).toEqual(['rule #1 of ConfigMap velero/modifiers (JSON merge patch)']);
    expect(out.object.metadata.labels).toEqual({ app: 'web', restored: 'yes' });
    expect((out.object.spec as { template: { spec: { tolerations: unknown[]; containers: unknown[] } } }).template.spec).toMatchObject({ tolerations: [] });
  });

  it('strategic merge patch: lists with a merge key merged by it, others replaced, $patch directives', () => {
    const m = parse(`version: v1
resourceModifierRules:
- conditions: {groupResource: deployments.apps}
  strategicPatches:
  - patchData: |
      spec:
        template:
          spec:
            containers:
            - name: web
              image: nginx:1.27
              env: [{name: B, value: "2"}]
            - name: sidecar
              $patch: delete
            - name: logger
              image: fluentbit
            tolerations: [{key: y, operator: Exists}]
`);
    const out = applyResourceModifiers(m, deployment(), 'deployments.apps');
    expect(out.errors).toEqual([]);
    const spec = (out.object.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    expect(spec.containers).toEqual([
      { name: 'web', image: 'nginx:1.27', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 80 }] },
      { name: 'logger', image: 'fluentbit' },
    ]);
    expect(spec.tolerations).toEqual([{ key: 'y', operator: 'Exists' }]);
    expect(spec.volumes).toEqual([{ name: 'data', emptyDir: {} }]);
  });

  it('strategic merge details: null and $patch delete remove keys, $patch replace replaces, finalizers merge as a set', () => {
    expect(strategicMerge({ a: { b: 1, c: 2 }, d: 1 }, { a: { b: null }, d: null })).toEqual({ a: { c: 2 } });
    expect(strategicMerge({ a: { b: 1, c: 2 } }, { a: { $patch: 'replace', x: 1 } })).toEqual({ a: { x: 1 } });
    expect(strategicMerge({ metadata: { finalizers: ['a', 'b'] } }, { metadata: { finalizers: ['b', 'c'] } })).toEqual({ metadata: { finalizers: ['a', 'b', 'c'] } });
    expect(strategicMerge({ spec: { ports: [{ port: 80, name: 'http' }] } }, { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } })).toEqual({
      spec: { ports: [{ port: 80, name: 'http', targetPort: 8080 }, { port: 443 }] },
    });
    expect(strategicMerge({ volumes: [{ name: 'a' }, { name: 'b' }] }, { volumes: [{ name: 'z' }, { $patch: 'replace' }] })).toEqual({ volumes: [{ name: 'z' }] });
    expect(() => strategicMerge({ a: 1 }, { $retainKeys: ['a'] })).toThrow(/\$retainKeys is not supported/);
  });

  it('every matching rule applies in order; conditions are judged on the item as it came in', () => {
    const m = parse(`version: v1
resourceModifierRules:
- conditions: {groupResource: deployments.apps, labelSelector: {matchLabels: {app: web}}}
  mergePatches: [{patchData: '{"metadata": {"labels": {"app": "changed"}}}'}]
- conditions: {groupResource: deployments.apps, labelSelector: {matchLabels: {app: web}}}
  mergePatches: [{patchData: '{"metadata": {"labels": {"second": "yes"}}}'}]
`);
    const out = applyResourceModifiers(m, deployment(), 'deployments.apps');
    expect(out.applied).toHaveLength(2);
    expect(out.object.metadata.labels).toEqual({ app: 'changed', tier: 'front', second: 'yes' });
  });
});
