import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three tiers (STYLE.md §8), one project each, one folder each; inside a tier, one folder per theme
 * (`test/unit/context/`, `test/integration/compaction/`, …; the README's "Tests" lists them). Support
 * code for every tier lives in `test/support/`, recorded workflow histories (data, read by unit and
 * integration tests) in `test/histories/`.
 * - unit: pure policy and fake-server tests; no Temporal, no PostgreSQL; seconds.
 * - integration: one Temporal dev server and one PostgreSQL for the whole run (global setup),
 *   workflows bundled once; each test uses its own task queue and conversation ids.
 * - chaos: faults and load on the same kind of stack, one file at a time; minutes.
 *   `test/chaos/cluster/` is left out of this run: `npm test` runs it afterwards, alone on the
 *   machine (its load takes every core), as `npm run test:cluster` does (vitest.cluster.config.mts,
 *   whose include is the glob excluded here).
 */
export default defineConfig({
  test: {
    // The second names, once at the end of a run, the shared sessions' directory when they are
    // missing and how many tests that skipped (test/support/sessions.ts).
    reporters: ['default', './test/support/shared-sessions-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/chaos/cluster/**'],
          globalSetup: ['test/support/global-setup.ts'],
          pool: 'forks',
          testTimeout: 1_200_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          pool: 'forks',
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
