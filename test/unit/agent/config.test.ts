import { describe, expect, it } from 'vitest';
import { NodeAgentConfigError, backupPvcClass, concurrencyForNode, hostingPodResources, listingCacheHostDir, loadAffinityFor, parseNodeAgentConfig, readNodeAgentConfig, prepareQueueLength } from '../../../src/agent/config.js';

describe('node-agent ConfigMap', () => {
  it('reads the JSON document of the ConfigMap (any key name; the last key wins)', () => {
    const config = parseNodeAgentConfig({
      'node-agent-config.json': JSON.stringify({
        loadConcurrency: { globalConfig: 2, perNodeConfig: [{ nodeSelector: { matchLabels: { 'kubernetes.io/hostname': 'node1' } }, number: 3 }], prepareQueueLength: 10 },
        podResources: { cpuRequest: '100m', memoryLimit: '1Gi' },
        priorityClassName: 'high',
        privilegedFsBackup: true,
        loadAffinity: [{ nodeSelector: { matchLabels: { zone: 'z1' } } }, { nodeSelector: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }, storageClass: 'fast' }],
      }),
    });
    expect(config).toEqual({
      loadConcurrency: { globalConfig: 2, prepareQueueLength: 10, perNodeConfig: [{ nodeSelector: { matchLabels: { 'kubernetes.io/hostname': 'node1' } }, number: 3 }] },
      loadAffinity: [{ nodeSelector: { matchLabels: { zone: 'z1' } } }, { nodeSelector: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }, storageClass: 'fast' }],
      podResources: { cpuRequest: '100m', memoryLimit: '1Gi' },
      priorityClassName: 'high',
      privilegedFsBackup: true,
    });
    expect(parseNodeAgentConfig({})).toEqual({});
    expect(parseNodeAgentConfig(undefined)).toEqual({});
  });

  it('names the keys of the document it does not apply, so that the node agent reports them', () => {
    const doc = {
      loadConcurrency: { globalConfig: 2 },
      loadAffinity: [{ nodeSelector: {} }],
      backupPVC: { fast: { storageClass: 'fast-backup', readOnly: false, spcNoRelabeling: true, futureSetting: 1 } },
      restorePVC: {},
      futureKey: 1,
      listingCacheDir: '',
    };
    expect(readNodeAgentConfig({ c: JSON.stringify(doc) })).toEqual({
      config: { loadConcurrency: { globalConfig: 2, perNodeConfig: [] }, loadAffinity: [{ nodeSelector: {} }], backupPVC: { fast: { storageClass: 'fast-backup', readOnly: false } }, restorePVC: {}, listingCacheDir: '' },
      notApplied: [
        'futureKey',
        'backupPVC.fast.futureSetting',
        'backupPVC.fast.spcNoRelabeling (only with readOnly)',
      ],
    });
    // Both values of ignoreDelayBinding are acted on; a restorePVC setting cairn does not know is named.
    for (const ignoreDelayBinding of [true, false]) {
      expect(readNodeAgentConfig({ c: JSON.stringify({ restorePVC: { ignoreDelayBinding } }) })).toEqual({ config: { restorePVC: { ignoreDelayBinding } }, notApplied: [] });
    }
    expect(readNodeAgentConfig({ c: JSON.stringify({ restorePVC: { futureSetting: 1 } }) }).notApplied).toEqual(['restorePVC.futureSetting']);
    expect(() => readNodeAgentConfig({ c: JSON.stringify({ restorePVC: { ignoreDelayBinding: 'no' } }) })).toThrow('restorePVC.ignoreDelayBinding must be true or false');
    expect(readNodeAgentConfig({})).toEqual({ config: {}, notApplied: [] });
    expect(() => readNodeAgentConfig({ c: '{' })).toThrow(NodeAgentConfigError);
  });

  it('picks the load affinity of a storage class: its own entry, else the first entry naming no class (as Velero)', () => {
    const zone1 = { nodeSelector: { matchLabels: { zone: 'z1' } } };
    const zone2 = { nodeSelector: { matchLabels: { zone: 'z2' } } };
    const fast = { nodeSelector: { matchLabels: { disk: 'ssd' } }, storageClass: 'fast' };
    expect(loadAffinityFor([zone1, fast, zone2], 'fast')).toEqual(fast);
    expect(loadAffinityFor([zone1, fast, zone2], 'slow')).toEqual(zone1);
    expect(loadAffinityFor([zone1, fast, zone2], undefined)).toEqual(zone1);
    expect(loadAffinityFor([fast], 'slow')).toBeUndefined();
    expect(loadAffinityFor(undefined, 'fast')).toBeUndefined();
  });

  it('reads backupPVC per source storage class, and gives the class a backup PVC is made in', () => {
    const backupPVC = { fast: { storageClass: 'fast-backup', readOnly: true, spcNoRelabeling: true, annotations: { a: 'b' } }, slow: { readOnly: true } };
    const config = parseNodeAgentConfig({ c: JSON.stringify({ backupPVC }) });
    expect(config.backupPVC).toEqual(backupPVC);
    expect(backupPvcClass(config, 'fast')).toBe('fast-backup');
    expect(backupPvcClass(config, 'slow')).toBe('slow');
    expect(backupPvcClass({}, 'fast')).toBe('fast');
    const bad = (v: unknown) => () => parseNodeAgentConfig({ c: JSON.stringify({ backupPVC: v }) });
    expect(bad([])).toThrow('backupPVC must map storage class names to settings');
    expect(bad({ fast: 'x' })).toThrow('backupPVC.fast must be an object');
    expect(bad({ fast: { readOnly: 'yes' } })).toThrow('backupPVC.fast.readOnly must be true or false');
    expect(bad({ fast: { annotations: { a: 1 } } })).toThrow('backupPVC.fast.annotations must map annotation keys to strings');
  });

  it('refuses a load affinity it could not apply as written', () => {
    const bad = (loadAffinity: unknown) => () => parseNodeAgentConfig({ c: JSON.stringify({ loadAffinity }) });
    expect(bad({ nodeSelector: {} })).toThrow('loadAffinity must be a list');
    expect(bad([{}])).toThrow('loadAffinity[0].nodeSelector must be a label selector');
    expect(bad([{ nodeSelector: { matchLabels: { zone: 1 } } }])).toThrow('loadAffinity[0].nodeSelector.matchLabels must map label keys to strings');
    expect(bad([{ nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['1'] }] } }])).toThrow('operator must be one of In, NotIn, Exists, DoesNotExist (got "Gt")');
    expect(bad([{ nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In' }] } }])).toThrow('In needs values');
    expect(bad([{ nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'Exists', values: ['x'] }] } }])).toThrow('Exists takes no values');
    expect(bad([{ nodeSelector: {}, storageClass: 3 }])).toThrow('loadAffinity[0].storageClass must be a string');
  });

  it('refuses a per-node concurrency rule whose selector could never match as written', () => {
    const bad = (rule: unknown) => () => parseNodeAgentConfig({ c: JSON.stringify({ loadConcurrency: { perNodeConfig: [rule] } }) });
    const where = 'loadConcurrency.perNodeConfig[0].nodeSelector';
    expect(bad({ nodeSelector: 'zone=a', number: 2 })).toThrow(`${where} must be a label selector`);
    expect(bad({ nodeSelector: { matchLabels: { zone: 1 } }, number: 2 })).toThrow(`${where}.matchLabels must map label keys to strings`);
    expect(bad({ nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'in', values: ['a'] }] }, number: 2 })).toThrow(
      `${where}.matchExpressions[0].operator must be one of In, NotIn, Exists, DoesNotExist (got "in")`,
    );
    expect(bad({ nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'NotIn' }] }, number: 2 })).toThrow('NotIn needs values');
    expect(bad({ nodeSelector: { matchExpressions: [{ operator: 'Exists' }] }, number: 2 })).toThrow(`${where}.matchExpressions[0] must have a key`);
    // A rule without a selector matches every node, as before.
    expect(parseNodeAgentConfig({ c: JSON.stringify({ loadConcurrency: { perNodeConfig: [{ number: 2 }] } }) }).loadConcurrency?.perNodeConfig).toEqual([{ nodeSelector: {}, number: 2 }]);
  });

  it('names what is wrong in a bad document', () => {
    expect(() => parseNodeAgentConfig({ c: '{' })).toThrow(NodeAgentConfigError);
    expect(() => parseNodeAgentConfig({ c: '{"loadConcurrency":{"globalConfig":"two"}}' })).toThrow('loadConcurrency.globalConfig must be an integer');
    expect(() => parseNodeAgentConfig({ c: '{"loadConcurrency":{"perNodeConfig":[{"number":1.5}]}}' })).toThrow('loadConcurrency.perNodeConfig[0].number must be an integer');
    expect(() => parseNodeAgentConfig({ c: '{"privilegedFsBackup":"yes"}' })).toThrow('privilegedFsBackup must be true or false');
    expect(() => parseNodeAgentConfig({ c: '{"uploadBytesPerSecond":"8Mi"}' })).toThrow('uploadBytesPerSecond must be an integer');
    expect(() => parseNodeAgentConfig({ c: '{"uploadBytesPerSecond":0}' })).toThrow('uploadBytesPerSecond must be a whole number of bytes per second, at least 1');
  });

  it('reads cairn\'s store retry budget, a duration', () => {
    expect(parseNodeAgentConfig({ c: '{"storeRetryTimeout":"10m"}' })).toEqual({ storeRetryTimeout: '10m' });
    expect(parseNodeAgentConfig({ c: '{"storeRetryTimeout":"0s"}' })).toEqual({ storeRetryTimeout: '0s' });
    expect(() => parseNodeAgentConfig({ c: '{"storeRetryTimeout":"ten minutes"}' })).toThrow('storeRetryTimeout must be a duration');
    expect(() => parseNodeAgentConfig({ c: '{"storeRetryTimeout":"-1m"}' })).toThrow('storeRetryTimeout must be a duration');
    expect(() => parseNodeAgentConfig({ c: '{"storeRetryTimeout":300}' })).toThrow('storeRetryTimeout must be a string');
  });

  it('reads where backup pods keep the listing caches on a node: an absolute path, or "" for none', () => {
    expect(listingCacheHostDir(parseNodeAgentConfig({}))).toBe('/var/lib/cairn/listing-cache');
    expect(listingCacheHostDir(parseNodeAgentConfig({ c: '{"listingCacheDir":"/mnt/ssd/cairn"}' }))).toBe('/mnt/ssd/cairn');
    expect(listingCacheHostDir(parseNodeAgentConfig({ c: '{"listingCacheDir":""}' }))).toBeUndefined();
    expect(() => parseNodeAgentConfig({ c: '{"listingCacheDir":"cache"}' })).toThrow('listingCacheDir must be an absolute path on the node, or "" for no listing cache');
    expect(() => parseNodeAgentConfig({ c: '{"listingCacheDir":true}' })).toThrow('listingCacheDir must be an absolute path');
  });

  it('reads the labels and annotations for data-mover pods, refusing what the API server would refuse', () => {
    const doc = { podLabels: { team: 'storage', 'example.com/tier': '' }, podAnnotations: { 'example.com/note': 'any text: even spaces' } };
    expect(readNodeAgentConfig({ c: JSON.stringify(doc) })).toEqual({ config: doc, notApplied: [] });
    expect(parseNodeAgentConfig({ c: '{"podLabels":{},"podAnnotations":null}' })).toEqual({});
    expect(() => parseNodeAgentConfig({ c: '{"podLabels":{"team":1}}' })).toThrow('podLabels must map label keys to strings');
    expect(() => parseNodeAgentConfig({ c: '{"podLabels":["team"]}' })).toThrow('podLabels must map label keys to strings');
    expect(() => parseNodeAgentConfig({ c: '{"podLabels":{"bad key":"x"}}' })).toThrow('podLabels: "bad key" is not a valid label key');
    expect(() => parseNodeAgentConfig({ c: '{"podLabels":{"team":"two words"}}' })).toThrow('podLabels.team: "two words" is not a valid label value');
    expect(() => parseNodeAgentConfig({ c: '{"podAnnotations":{"-bad":"x"}}' })).toThrow('podAnnotations: "-bad" is not a valid annotation key');
    expect(() => parseNodeAgentConfig({ c: '{"podLabels":{"velero.io/data-upload":"x"}}' })).toThrow(
      "podLabels: velero.io/data-upload is the label that names each data-mover pod's PVB/PVR/DataUpload/DataDownload",
    );
  });

  it('reads cairn\'s upload cap for backup pods', () => {
    expect(parseNodeAgentConfig({ c: '{"uploadBytesPerSecond":8388608}' })).toEqual({ uploadBytesPerSecond: 8388608 });
  });

  it('takes the smallest matching per-node number, else the global number, else 1; values of 0 or less do not count', () => {
    const config = parseNodeAgentConfig({
      c: JSON.stringify({
        loadConcurrency: {
          globalConfig: 4,
          perNodeConfig: [
            { nodeSelector: { matchLabels: { zone: 'a' } }, number: 3 },
            { nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1', 'n2'] }] }, number: 2 },
            { nodeSelector: { matchLabels: { zone: 'a' } }, number: 0 },
          ],
        },
      }),
    });
    expect(concurrencyForNode(config, { zone: 'a', 'kubernetes.io/hostname': 'n1' })).toBe(2);
    expect(concurrencyForNode(config, { zone: 'a', 'kubernetes.io/hostname': 'n9' })).toBe(3);
    expect(concurrencyForNode(config, { zone: 'b' })).toBe(4);
    expect(concurrencyForNode({}, { zone: 'b' })).toBe(1);
    expect(concurrencyForNode({ loadConcurrency: { globalConfig: -1 } }, {})).toBe(1);
  });

  it('bounds the prepare queue only when prepareQueueLength is positive', () => {
    expect(prepareQueueLength({})).toBe(0);
    expect(prepareQueueLength({ loadConcurrency: { prepareQueueLength: -3 } })).toBe(0);
    expect(prepareQueueLength({ loadConcurrency: { prepareQueueLength: 5 } })).toBe(5);
  });

  it('turns podResources into container requests and limits', () => {
    expect(hostingPodResources({ podResources: { cpuRequest: '1', memoryRequest: '1Gi', cpuLimit: '2', memoryLimit: '2Gi' } })).toEqual({
      requests: { cpu: '1', memory: '1Gi' },
      limits: { cpu: '2', memory: '2Gi' },
    });
    expect(hostingPodResources({ podResources: { memoryLimit: '2Gi' } })).toEqual({ limits: { memory: '2Gi' } });
    expect(hostingPodResources({ podResources: {} })).toBeUndefined();
    expect(hostingPodResources({})).toBeUndefined();
  });
});
