/** The object-store conformance suite against MinIO from the local test bed. */
import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { S3ObjectStore } from '../../src/plugins/object-store/index.js';
import { objectStoreConformance } from '../unit/object-store/conformance.js';
import { clusterInfo } from '../support/cluster.js';

describe('S3 object store (MinIO)', () => {
  objectStoreConformance(async () => {
    const { s3 } = await clusterInfo();
    return new S3ObjectStore({
      bucket: s3.bucket,
      prefix: `conformance-${randomBytes(6).toString('hex')}/`,
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  });
});
