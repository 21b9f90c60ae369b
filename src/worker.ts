/**
 * Building a worker: one task queue, the project's workflows (bundled once, or from source) and
 * the activities of `createActivities`.
 */
import { Worker, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { createActivities, type CreateActivitiesOptions } from '../activities';

export const DEFAULT_TASK_QUEUE = 'durable-compaction';
/** The workflows' entry file (an explicit path: vitest's `require.resolve` does not resolve `.ts`). */
export const WORKFLOWS_PATH = join(__dirname, '..', 'workflows', 'index.ts');

export interface WorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  pool: Pool;
  /** A prebuilt bundle (tests bundle once per run); default: bundle from source at creation. */
  workflowBundle?: WorkflowBundle;
  llm?: CreateActivitiesOptions['llm'];
  tools?: CreateActivitiesOptions['tools'];
  /** Replace or add activities (tests inject faults this way). */
  activityOverrides?: Record<string, (...args: never[]) => Promise<unknown>>;
  /** Graceful shutdown: how long in-flight activities get before they are handed back. */
  shutdownGraceTime?: string;
}

export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const activities = {
    ...createActivities({ pool: options.pool, llm: options.llm, tools: options.tools }),
    ...(options.activityOverrides ?? {}),
  };
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: WORKFLOWS_PATH }),
    activities,
    shutdownGraceTime: (options.shutdownGraceTime ?? '10s') as '10s',
  });
}
