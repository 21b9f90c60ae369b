/**
 * Building a worker: one task queue, the project's workflows (bundled once, or from source; or the
 * user's workflows file, which exports ours) and the activities of `createActivities`, with the
 * user's tools and activities. The package's `./worker` entry.
 */
import { bundleWorkflowCode, Worker, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { PayloadCodec } from '@temporalio/common';
import { createActivities, toolRegistry, type AgentTool, type LlmSettings } from '../activities';
import { payloadCodecsFor } from './infra/codec';
import { codeModule, PACKAGE_VERSION } from './package-paths';
import { connectPostgres } from './infra/postgres';

/** What a worker's author needs besides `createWorker`: tools, activities, their types. */
export {
  createActivities,
  defineTool,
  ToolError,
  DEFAULT_MAX_OUTPUT_CHARS,
  DEFAULT_TOOL_TIMEOUT_MS,
  MAX_TOOL_TIMEOUT_MS,
  type AgentTool,
  type CreateActivitiesOptions,
  type DefinedTool,
  type JsonSchema,
  type JsonSchemaToolSpec,
  type LlmSettings,
  type ToolCallContext,
  type ToolContext,
  type ToolOutput,
  type ToolResultValue,
  type ZodToolSpec,
} from '../activities';
export { migrate } from './store/migrate';

export const DEFAULT_TASK_QUEUE = 'durable-compaction';
/** The workflows' entry file (an explicit path: vitest's `require.resolve` does not resolve `.ts`). */
export const WORKFLOWS_PATH = codeModule('workflows', 'index');

export interface WorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /**
   * The store, as a pool you opened (and close, after the worker). Migrations are yours to run
   * (`migrate`, src/store/migrate.ts). Give this or `databaseUrl`.
   */
  pool?: Pool;
  /**
   * The store, as a PostgreSQL URL (`postgres://user:password@host:5432/db`; a remote host needs
   * TLS, see `parseDatabaseUrl`): the worker connects a pool, applies the migrations, and closes the
   * pool when `run()` ends. Give this or `pool`.
   */
  databaseUrl?: string;
  /** Connections of the pool opened for `databaseUrl`. Default 10. */
  poolSize?: number;
  /** A prebuilt bundle (tests bundle once per run); default: bundle `workflowsPath` at creation. */
  workflowBundle?: WorkflowBundle;
  /**
   * Your workflows file, bundled instead of ours: it must export our workflows it runs —
   * `export { compaction } from '…/workflows'` for `compactConversation`, or `export * from
   * '…/workflows'` for them all. Default: ours ({@link WORKFLOWS_PATH}). Ignored with `workflowBundle`.
   */
  workflowsPath?: string;
  /** The LLM endpoint (key, base URL, timeout); a field left out is read from the environment. */
  llm?: LlmSettings;
  /**
   * Your tools, made with `defineTool` (or written as `AgentTool`s), offered besides the built-in
   * ones to conversations that name them at start. A built-in tool's name is refused here.
   */
  tools?: AgentTool[];
  /**
   * Your own activities (your workflow's model call, say), registered beside ours. A name one of
   * ours has is refused: use `activityOverrides` to replace one of ours on purpose.
   */
  activities?: Record<string, (...args: never[]) => Promise<unknown>>;
  /** Replace or add activities (tests inject faults this way). */
  activityOverrides?: Record<string, (...args: never[]) => Promise<unknown>>;
  /**
   * Payload codecs (default: the claim check on the store's pool, then AES-GCM when DC_PAYLOAD_KEY
   * is set; see src/infra/codec.ts).
   */
  payloadCodecs?: PayloadCodec[];
  /** Graceful shutdown: how long in-flight activities get before they are handed back. */
  shutdownGraceTime?: string;
  /** After this long the worker stops even if activities ignore their cancellation (default: none). */
  shutdownForceTime?: string;
  /** How much the worker takes on at once (default: the SDK's; see {@link WorkerConcurrency}). */
  concurrency?: WorkerConcurrency;
}

/**
 * How many tasks of each kind one worker process runs at once (Temporal's slots). A worker that
 * takes on more than its CPU finishes within the workflow task timeout (10 s) sees its tasks time
 * out on the server, to be replayed from the whole history by another worker, which costs more CPU
 * again; with fewer slots the tasks wait on the server instead, where waiting costs nothing (issue
 * 27: on 2 cores shared by three workers, workflow tasks completed too late went from ~680 with
 * the SDK's 40 to 6 with 8 a worker, and the attack passed with 3; bench/RELIABILITY.md). An agent
 * call runs as a local activity within its workflow task, so `workflowTasks` also bounds the model
 * calls a worker has open at once.
 */
export interface WorkerConcurrency {
  /** Workflow tasks (SDK default 40). */
  workflowTasks?: number;
  /** Activities: compaction steps, and agent and tool calls with `agentCalls: 'task_queue'` (SDK default 100). */
  activities?: number;
  /** Local activities: store writes, and agent and tool calls by default (SDK default 100). */
  localActivities?: number;
}

/** The concurrency as the SDK's worker options; a value that is not a positive integer is refused. */
export function concurrencyOptions(concurrency: WorkerConcurrency = {}): {
  maxConcurrentWorkflowTaskExecutions?: number;
  maxConcurrentActivityTaskExecutions?: number;
  maxConcurrentLocalActivityExecutions?: number;
} {
  for (const [key, value] of Object.entries(concurrency)) {
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1))
      throw new TypeError(
        `createWorker: concurrency.${key} must be a positive integer (got ${String(value)})`,
      );
  }
  return {
    ...(concurrency.workflowTasks ? { maxConcurrentWorkflowTaskExecutions: concurrency.workflowTasks } : {}),
    ...(concurrency.activities ? { maxConcurrentActivityTaskExecutions: concurrency.activities } : {}),
    ...(concurrency.localActivities
      ? { maxConcurrentLocalActivityExecutions: concurrency.localActivities }
      : {}),
  };
}

/**
 * Modules evaluated once per workflow thread and shared by every workflow, instead of once per
 * workflow execution (the SDK's reusable V8 context gives each execution its own module cache).
 * The compaction config — zod and the schema it builds — was ~17 ms of each new workflow's first
 * task, paid by every compaction child. A preloaded module must hold no per-workflow state; the SDK
 * freezes what it exports.
 */
const PRELOADED_MODULES = [codeModule('src', 'context', 'config')];

/** Bundles the workflows of `workflowsPath` (default: ours) with webpack, printing only errors. */
export function bundleWorkflows(workflowsPath: string = WORKFLOWS_PATH): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath,
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

/** Refuses store options that name no store, or two. */
function checkStoreOptions(options: WorkerOptions): void {
  if (options.pool && options.databaseUrl !== undefined) {
    throw new TypeError('createWorker: give `pool` or `databaseUrl`, not both');
  }
  if (!options.pool && !options.databaseUrl) {
    throw new TypeError(
      'createWorker: give `databaseUrl` (e.g. process.env.DATABASE_URL) or `pool`: the store is in PostgreSQL',
    );
  }
}

/** The store's pool: the one given, or one connected (and migrated) for `databaseUrl`. */
async function openStore(options: WorkerOptions): Promise<{ pool: Pool; close: () => Promise<void> }> {
  if (options.pool) return { pool: options.pool, close: async () => undefined };
  const postgres = await connectPostgres({
    url: options.databaseUrl,
    ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
  });
  return { pool: postgres.pool, close: () => postgres.shutdown() };
}

/**
 * A worker on one task queue with our workflows (or `workflowsPath`'s) and our activities, your
 * tools and your activities. Run it with `run()` (or `runUntil`); `shutdown()` stops it. What it
 * opened for `databaseUrl` is closed when `run()` ends, or at once when creation fails.
 *
 * ```ts
 * const worker = await createWorker({
 *   connection: await NativeConnection.connect({ address: 'localhost:7233' }),
 *   databaseUrl: process.env.DATABASE_URL,
 *   llm: { baseURL: 'http://localhost:11434/v1', apiKey: 'ollama' },
 *   tools: [weather],
 *   taskQueue: 'agents',
 * });
 * await worker.run();
 * ```
 *
 * @throws before anything runs: neither or both of `pool` and `databaseUrl`, a tool named like a
 *   built-in one (or two of one name), an activity named like one of ours, a concurrency that is
 *   not a positive integer
 */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  // Checked before connecting: a missing store or a bad tool name fails without opening anything.
  checkStoreOptions(options);
  toolRegistry(options.tools);
  const slots = concurrencyOptions(options.concurrency);
  const store = await openStore(options);
  try {
    const ours = createActivities({ pool: store.pool, llm: options.llm, tools: options.tools });
    const taken = Object.keys(options.activities ?? {}).filter((name) => name in ours);
    if (taken.length > 0) {
      throw new TypeError(
        `createWorker: activit${taken.length > 1 ? 'ies' : 'y'} ${taken.map((n) => JSON.stringify(n)).join(', ')} ` +
          'would replace ours of the same name: rename yours (or use activityOverrides to replace ours on purpose)',
      );
    }
    const activities = { ...ours, ...(options.activities ?? {}), ...(options.activityOverrides ?? {}) };
    const workflowBundle = options.workflowBundle ?? (await bundleWorkflows(options.workflowsPath));
    const worker = await Worker.create({
      connection: options.connection,
      namespace: options.namespace ?? 'default',
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      workflowBundle,
      buildId: workerBuildId(workflowBundle),
      dataConverter: { payloadCodecs: options.payloadCodecs ?? payloadCodecsFor(store.pool) },
      activities,
      shutdownGraceTime: (options.shutdownGraceTime ?? '10s') as '10s',
      ...slots,
      ...(options.shutdownForceTime ? { shutdownForceTime: options.shutdownForceTime as '10s' } : {}),
    });
    // `runUntil` calls `run` too: the pool outlives every activity and closes with the worker.
    const run = worker.run.bind(worker);
    worker.run = () => run().finally(store.close);
    return worker;
  } catch (err) {
    await store.close();
    throw err;
  }
}
