export type { ObjectStore, ObjectInfo, ByteRange, GetOptions, PutOptions, SignedUrlOptions } from './types.js';
export { ObjectStoreError, ObjectNotFoundError, RetriesExhaustedError, isNotFound, isRetryable } from './errors.js';
export { FilesystemObjectStore, type FilesystemStoreOptions } from './filesystem.js';
export { S3ObjectStore, type S3StoreOptions } from './s3.js';
export { RetryingObjectStore, RetryPolicy, DEFAULT_RETRY_FOR_MS, type RetryOptions, type RetryEvent } from './retry.js';
export { ConcurrencyLimitedObjectStore, Semaphore } from './limit.js';
export { FaultInjectingObjectStore, type FaultRule, type StoreOperation } from './fault.js';
export { objectStoreFromUrl, InvalidStoreUrlError, type OpenStoreOptions } from './from-url.js';
export { UploadRateLimitedObjectStore, BytePacer, InvalidUploadRateError, validUploadRate, withUploadRate } from './upload-rate.js';
