import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the chaos tier's `test/chaos/cluster/` — the production topology
 * (`up --cluster`: temporal-server on PostgreSQL, several worker processes), started by each test
 * in processes of its own, and attacked. vitest.config.mts leaves that folder out of its run (keep
 * the two globs equal); `npm run test:all` runs this config after `npm test`, so that the attack
 * (23–24 minutes on 2 cores, every core busy) has the machine to itself. It is not in `npm test`:
 * with it CI would pass 45 minutes.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/cluster/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 3_600_000,
    hookTimeout: 1_200_000,
    fileParallelism: false,
  },
});
