/** velero.io/v1 VolumeSnapshotLocation (docs/api.md). */
import { Type, type Static } from '@sinclair/typebox';
import { defineKind } from '../meta.js';
import { SecretKeySelector, StringEnum, StringMap, namedValues } from '../schema.js';

export const VolumeSnapshotLocationPhases = ['Available', 'Unavailable'] as const;
export const VolumeSnapshotLocationPhase = namedValues(VolumeSnapshotLocationPhases);
export type VolumeSnapshotLocationPhase = (typeof VolumeSnapshotLocationPhases)[number];

export const VolumeSnapshotLocationSpec = Type.Object(
  {
    provider: Type.String({ description: 'Volume snapshotter plugin.' }),
    config: Type.Optional(StringMap({ description: 'Provider-specific settings.' })),
    credential: Type.Optional(SecretKeySelector),
  },
  { description: 'Where and how native volume snapshots are taken.' },
);
export type VolumeSnapshotLocationSpec = Static<typeof VolumeSnapshotLocationSpec>;

export const VolumeSnapshotLocationStatus = Type.Object({
  phase: Type.Optional(StringEnum(VolumeSnapshotLocationPhases)),
});
export type VolumeSnapshotLocationStatus = Static<typeof VolumeSnapshotLocationStatus>;

export const VolumeSnapshotLocationKind = defineKind({
  kind: 'VolumeSnapshotLocation',
  shortNames: ['vsl'],
  description: 'A VolumeSnapshotLocation names a provider and settings for native volume snapshots.',
  spec: VolumeSnapshotLocationSpec,
  status: VolumeSnapshotLocationStatus,
});
export type VolumeSnapshotLocation = Static<typeof VolumeSnapshotLocationKind.schema>;
