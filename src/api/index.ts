/**
 * The velero.io API in TypeScript: one TypeBox schema per kind gives the types, the runtime validators and the CRDs.
 * See docs/api.md.
 */
export * from './constants.js';
export * from './duration.js';
export * from './cron.js';
export * from './names.js';
export * from './label-selectors.js';
export * from './glob.js';
export * from './schema.js';
export * from './meta.js';
export * from './kinds.js';
export * from './crd-schema.js';
export * from './crd.js';
export * from './validation.js';
export * from './objects.js';
export * from './schedule-backup.js';
export * from './kinds/backup.js';
export * from './kinds/restore.js';
export * from './kinds/schedule.js';
export * from './kinds/backup-storage-location.js';
export * from './kinds/volume-snapshot-location.js';
export * from './kinds/pod-volume-backup.js';
export * from './kinds/pod-volume-restore.js';
export * from './kinds/backup-repository.js';
export * from './kinds/delete-backup-request.js';
export * from './kinds/download-request.js';
export * from './kinds/server-status-request.js';
export * from './kinds/data-upload.js';
export * from './kinds/data-download.js';
export * from './item-operations.js';
export * from './time.js';
export * from './operation-log.js';
export * from './crd-client-model.js';
export * from './cancel.js';
