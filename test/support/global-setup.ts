/**
 * One Temporal dev server and one PostgreSQL for the whole integration run; workflows bundled once.
 * Tests get the addresses through `inject` (see harness.ts) and use their own task queues and
 * conversation ids, so they do not see each other.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { connectPostgres, type PostgresHandle } from '../../src/infra/postgres';
import { connectTemporal, type TemporalHandle } from '../../src/infra/temporal';
import { bundleWorkflows } from '../../src/worker';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalUiUrl: string | null;
    databaseUrl: string;
    workflowBundlePath: string;
  }
}

let temporal: TemporalHandle | undefined;
let postgres: PostgresHandle | undefined;

export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  [temporal, postgres] = await Promise.all([
    connectTemporal({ address: process.env.TEST_TEMPORAL_ADDRESS, ui: true }),
    connectPostgres({ url: process.env.TEST_DATABASE_URL, poolSize: 2 }),
  ]);
  const outDir = join(__dirname, '..', '..', 'test-output');
  mkdirSync(outDir, { recursive: true });
  const bundle = await bundleWorkflows();
  const bundlePath = join(outDir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalUiUrl', temporal.uiUrl);
  project.provide('databaseUrl', postgres.url);
  project.provide('workflowBundlePath', bundlePath);
  console.error(
    `integration setup: Temporal ${temporal.address} (UI ${temporal.uiUrl ?? 'none'}), PostgreSQL ${postgres.displayUrl}, ` +
      `bundle ${Math.round(bundle.code.length / 1024)} KB, ${Date.now() - started} ms`,
  );
}

export async function teardown(): Promise<void> {
  await postgres?.shutdown();
  await temporal?.shutdown();
}
