/**
 * `durable-compaction worker`: a worker against TEMPORAL_ADDRESS and DATABASE_URL (or the embedded
 * ones when unset). SIGINT/SIGTERM shut it down gracefully: in-flight activities get the grace time
 * to finish, then are handed back to the server for another worker. DC_WORKER_WORKFLOW_TASKS,
 * DC_WORKER_ACTIVITIES and DC_WORKER_LOCAL_ACTIVITIES set how much it takes on at once.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { validateEnvironment } from '../../infra/environment';
import { onStopSignal } from '../../infra/signals';
import type { WorkerConcurrency } from '../../worker';
import { intArgument } from '../client';

/** Environment variables of the worker's concurrency (see `WorkerConcurrency` in src/worker.ts). */
export const CONCURRENCY_ENV = {
  workflowTasks: 'DC_WORKER_WORKFLOW_TASKS',
  activities: 'DC_WORKER_ACTIVITIES',
  localActivities: 'DC_WORKER_LOCAL_ACTIVITIES',
} as const;

/** The worker's concurrency from the environment (unset: the SDK's default); a bad value is refused by name. */
export function concurrencyFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerConcurrency {
  const out: WorkerConcurrency = {};
  for (const [key, name] of Object.entries(CONCURRENCY_ENV) as [keyof WorkerConcurrency, string][]) {
    const value = env[name];
    if (value !== undefined && value !== '') out[key] = intArgument(name, value, 1, 10_000);
  }
  return out;
}

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('run a worker (TEMPORAL_ADDRESS, DATABASE_URL, TASK_QUEUE from the environment)')
    .option('--task-queue <name>', 'task queue', process.env.TASK_QUEUE ?? 'durable-compaction')
    .option('--grace <duration>', 'how long in-flight activities get at shutdown', '30s')
    .option(
      '--workflow-bundle <file>',
      'a prebuilt workflow bundle (bundleWorkflowCode output) instead of bundling at start',
    )
    .action(async (opts: { taskQueue: string; grace: string; workflowBundle?: string }) => {
      validateEnvironment();
      const concurrency = concurrencyFromEnv();
      // Loaded after the checks: a typo in the environment fails before anything heavy loads.
      const { connectPostgres } = await import('../../infra/postgres');
      const { connectTemporal } = await import('../../infra/temporal');
      // The same data directory as `up` (DC_DATA_DIR), used only for what is embedded.
      const dataDir = process.env.DC_DATA_DIR ?? '.data';
      if (!process.env.TEMPORAL_ADDRESS) mkdirSync(join(dataDir, 'temporal'), { recursive: true });
      const postgres = await connectPostgres({
        dataDir: process.env.DATABASE_URL ? undefined : join(dataDir, 'postgres'),
      });
      const { payloadCodecsFor } = await import('../../infra/codec');
      const temporal = await connectTemporal({
        payloadCodecs: payloadCodecsFor(postgres.pool),
        dbFilename: join(dataDir, 'temporal', 'temporal.db'),
      }).catch(async (err: unknown) => {
        await postgres.shutdown();
        throw err;
      });
      const { createWorker } = await import('../../worker');
      const worker = await createWorker({
        connection: temporal.nativeConnection,
        namespace: temporal.namespace,
        pool: postgres.pool,
        taskQueue: opts.taskQueue,
        ...(opts.workflowBundle
          ? { workflowBundle: { code: readFileSync(opts.workflowBundle, 'utf8') } }
          : {}),
        shutdownGraceTime: opts.grace,
        concurrency,
      });
      const taking = Object.entries(concurrency)
        .map(([kind, n]) => `${n} ${kind.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}`)
        .join(', ');
      console.log(
        `worker: task queue "${opts.taskQueue}" on ${temporal.address}, PostgreSQL ${postgres.displayUrl}` +
          (taking ? `; at once at most ${taking}` : ''),
      );
      const stop = (signal: string): void => {
        console.log(`${signal}: shutting down (in-flight activities get ${opts.grace})`);
        worker.shutdown();
      };
      // One orderly stop: the worker hands back its in-flight activities before the servers go.
      onStopSignal(stop);
      await worker.run();
      await temporal.shutdown();
      await postgres.shutdown();
      console.log('worker: stopped');
    });
}
