import { defineConfig } from 'vitest/config';

// Three tiers by folder (see docs/testing.md): unit needs nothing; integration and e2e share one
// local cluster (control plane + MinIO) that the global setup starts once per run and always stops.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Limits that catch a hang, not a slow machine: the data-path tests take seconds alone and several times
          // that on two cores shared with other work.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'cluster',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
