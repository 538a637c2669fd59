import { describe, expect, it } from 'vitest';
import { buildBackup, checkDataMover, normaliseTriStateArgv } from '../../../src/cli/backups.js';
import { usageMessage } from './usage-message.js';

describe('backup create: snapshot data movement flags', () => {
  it('--snapshot-move-data, --data-mover and the timeouts go into the spec', () => {
    const b = buildBackup({
      name: 'db',
      namespace: 'velero',
      'snapshot-move-data': true,
      'data-mover': 'velero',
      'item-operation-timeout': '2h',
      'csi-snapshot-timeout': '5m',
      'snapshot-volumes': true,
    });
    expect(b.spec).toMatchObject({ snapshotMoveData: true, datamover: 'velero', itemOperationTimeout: '2h0m0s', csiSnapshotTimeout: '5m0s', snapshotVolumes: true });
  });

  it('unset flags leave the spec alone (the server fills the defaults)', () => {
    const b = buildBackup({ name: 'db', namespace: 'velero' });
    expect(b.spec.snapshotMoveData).toBeUndefined();
    expect(b.spec.datamover).toBeUndefined();
    expect(b.spec.itemOperationTimeout).toBeUndefined();
    expect(buildBackup({ name: 'db', namespace: 'velero', 'snapshot-move-data': false }).spec.snapshotMoveData).toBe(false);
  });

  it('--snapshot-move-data=true|false works as in Velero', () => {
    expect(normaliseTriStateArgv(['--snapshot-move-data=false'], ['snapshot-move-data'])).toEqual(['--no-snapshot-move-data']);
    expect(normaliseTriStateArgv(['--snapshot-move-data=TRUE'], ['snapshot-move-data'])).toEqual(['--snapshot-move-data']);
  });

  it('bad values name the flag', () => {
    expect(usageMessage(() => buildBackup({ name: 'db', namespace: 'velero', 'data-mover': 'My Mover' }))).toMatch(/^--data-mover: "My Mover" is not a data mover name/);
    expect(usageMessage(() => buildBackup({ name: 'db', namespace: 'velero', 'item-operation-timeout': 'soon' }))).toMatch(/^--item-operation-timeout: "soon" is not a duration/);
    expect(usageMessage(() => checkDataMover('x'.repeat(64)))).toMatch(/^--data-mover:/);
    expect(checkDataMover(' acme.io-mover ')).toBe('acme.io-mover');
  });
});
