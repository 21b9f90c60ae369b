/**
 * The worker side of durable-compaction: a Temporal worker that runs the agent conversation and
 * compaction workflows and their activities (`createWorker`), and the pieces to build one yourself.
 * What `src/worker.ts` exports, as the package's `durable-compaction/worker` entry.
 *
 * @module durable-compaction/worker
 */
export * from './worker';

// ---- Tools an agent may call, registered on the worker ----
export type { AgentTool, ToolContext, ToolNote, ToolOutput } from '../activities/tools/registry';
