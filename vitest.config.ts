import { configDefaults, defineConfig } from 'vitest/config';

/**
 * End-to-end files that run beside the integration tier on its stand-in shards instead of real nodes' shards, because
 * the real nodes of the e2e tier's cluster would add nothing to them: the image test runs cairn's image under a
 * containerd of its own and needs only an API server; the fresh-cache test starts real-node clusters of its own (the
 * README's `cluster:up` and `npm run demo`) and never uses the tier's (docs/test-bed.md, "Which tier runs where").
 */
const E2E_ON_STAND_IN: string[] = ['test/e2e/image.test.ts', 'test/e2e/fresh-cache.test.ts'];

/**
 * Files written but not yet run green: kept out of `npm test` so that what it runs is what passes, and run on their
 * own with `npx vitest run --project not-yet-green` (docs/testing.md lists them and why).
 */
const NOT_YET_GREEN: string[] = [];

/**
 * Unit files that need a process of their own: one replaces `node:fs` with vi.mock (a module shared workers would
 * hand to every later file), one measures V8's young generation, which earlier files in the same process have grown.
 * Every other unit file shares its worker's module cache (`isolate: false`): importing the source tree anew for each
 * of ~190 files took nearly half the tier's time.
 */
const UNIT_OWN_PROCESS: string[] = ['test/unit/datapath/vanished.test.ts', 'test/unit/datapath/heap-tuning.test.ts'];

// Three tiers by folder (see docs/testing.md): unit needs nothing; integration runs on one local cluster with the
// kubelet stand-in, e2e on one cluster of real nodes (kubelet, containerd) running cairn's image; each global setup
// starts its cluster once per run and always stops it.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT_OWN_PROCESS],
          isolate: false,
          // Limits that catch a hang, not a slow machine: the data-path tests take seconds alone and several times
          // that on two cores shared with other work.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'unit-own-process',
          include: UNIT_OWN_PROCESS,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'cluster',
          include: ['test/integration/**/*.test.ts', ...E2E_ON_STAND_IN],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...E2E_ON_STAND_IN, ...NOT_YET_GREEN],
          globalSetup: ['test/support/global-setup-e2e.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      // Only while some file waits to run green: vitest refuses a project that matches no file.
      ...(NOT_YET_GREEN.length > 0
        ? [
            {
              test: {
                name: 'not-yet-green',
                include: NOT_YET_GREEN,
                globalSetup: ['test/support/global-setup-e2e.ts'],
                testTimeout: 300_000,
                hookTimeout: 600_000,
                fileParallelism: false,
              },
            },
          ]
        : []),
    ],
  },
});
