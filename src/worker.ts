/**
 * Building a worker: one task queue, the project's workflows (bundled once, or from source) and
 * the activities of `createActivities`.
 */
import { bundleWorkflowCode, Worker, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { PayloadCodec } from '@temporalio/common';
import { createActivities, type CreateActivitiesOptions } from '../activities';
import { payloadCodecsFor } from './infra/codec';

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
  /**
   * Payload codecs (default: the claim check on `pool`, then AES-GCM when DC_PAYLOAD_KEY is set;
   * see src/infra/codec.ts).
   */
  payloadCodecs?: PayloadCodec[];
  /** Graceful shutdown: how long in-flight activities get before they are handed back. */
  shutdownGraceTime?: string;
  /** After this long the worker stops even if activities ignore their cancellation (default: none). */
  shutdownForceTime?: string;
}

/**
 * Modules evaluated once per workflow thread and shared by every workflow, instead of once per
 * workflow execution (the SDK's reusable V8 context gives each execution its own module cache).
 * The compaction config — zod and the schema it builds — was ~17 ms of each new workflow's first
 * task, paid by every compaction child. A preloaded module must hold no per-workflow state; the SDK
 * freezes what it exports.
 */
const PRELOADED_MODULES = [join(__dirname, 'context', 'config.ts')];

/** Bundles the workflows (webpack), printing only errors. */
export function bundleWorkflows(): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: quietBundler,
    preloadModules: PRELOADED_MODULES,
  });
}

const quietBundler = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => console.error(message),
};

/**
 * The worker's build id, stamped on every task it completes: the package version and a short hash
 * of the workflow code. The SDK's default (`@temporalio/worker@x+<64 hex>`) is repeated in three
 * events per workflow task and one per activity — about 1 KB of history per round.
 */
export function workerBuildId(bundle: WorkflowBundle): string {
  return `dc@${PACKAGE_VERSION}+${createHash('sha256').update(bundle.code).digest('hex').slice(0, 12)}`;
}

const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const activities = {
    ...createActivities({ pool: options.pool, llm: options.llm, tools: options.tools }),
    ...(options.activityOverrides ?? {}),
  };
  const workflowBundle = options.workflowBundle ?? (await bundleWorkflows());
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowBundle,
    buildId: workerBuildId(workflowBundle),
    dataConverter: { payloadCodecs: options.payloadCodecs ?? payloadCodecsFor(options.pool) },
    activities,
    shutdownGraceTime: (options.shutdownGraceTime ?? '10s') as '10s',
    ...(options.shutdownForceTime ? { shutdownForceTime: options.shutdownForceTime as '10s' } : {}),
  });
}
