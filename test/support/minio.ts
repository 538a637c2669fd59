/**
 * Object-store outages for cluster tests: stop the test cluster's MinIO (clients get "connection refused") and start
 * it again on the same endpoint, credentials and data. A test that stops it must start it again whatever happens
 * (`finally`, or afterAll), since the other test files of the run share it.
 */
import { startMinioAgain, stopMinio } from '../../tools/local-cluster/minio.js';
import { clusterInfo } from './cluster.js';

export async function stopObjectStore(): Promise<void> {
  await stopMinio(clusterInfo().runDir);
}

export async function startObjectStore(timeoutMs = 60_000): Promise<void> {
  await startMinioAgain(clusterInfo().runDir, timeoutMs);
}

/** True while the cluster's MinIO answers its readiness probe. */
export async function objectStoreUp(): Promise<boolean> {
  try {
    const res = await fetch(`${clusterInfo().s3.endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  } catch {
    return false;
  }
}
