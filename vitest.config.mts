import { defineConfig } from 'vitest/config';

/**
 * Two tiers (STYLE.md §8):
 * - unit: pure policy and fake-server tests; no Temporal, no PostgreSQL; seconds.
 * - integration: one Temporal dev server and one PostgreSQL for the whole run (global setup),
 *   workflows bundled once; each test uses its own task queue and conversation ids.
 */
export default defineConfig({
  test: {
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
          include: ['test/integration/**/*.test.ts', 'test/bad-input/**/*.test.ts'],
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
