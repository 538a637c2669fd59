/**
 * vitest globalSetup of the "cluster" project (the integration tier): one local cluster on the kubelet stand-in per
 * test run (test-cluster.ts). The stand-in starts in seconds and runs this tree's code without an image build.
 */
import type { TestProject } from 'vitest/node';
import { startTestCluster } from './test-cluster.js';

export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return startTestCluster(project, { runtime: 'local' });
}
