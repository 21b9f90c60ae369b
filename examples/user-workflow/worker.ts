/**
 * The worker of your workflow: `createWorker` bundles your workflows file (which exports our
 * compaction child) and registers your activities beside ours.
 */
import { NativeConnection } from '@temporalio/worker';
import { createWorker } from 'durable-compaction/worker';
import * as activities from './activities';

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({
    address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
  });
  const worker = await createWorker({
    connection,
    databaseUrl: process.env.DATABASE_URL ?? 'postgres://localhost:5432/durable_compaction',
    taskQueue: process.env.TASK_QUEUE ?? 'research',
    workflowsPath: require.resolve('./workflows'),
    activities,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  console.log(`worker ready on task queue ${worker.options.taskQueue}`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
