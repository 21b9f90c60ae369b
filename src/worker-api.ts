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

// ---- What the activities take and return (`createActivities`, the stored-conversation activities) ----
export type * from '../activities/types';
export type * from '../activities/stored-conversation-types';
export type { MigrationResult } from './store/migrate';
export type { AssistantMessage, ContentPart, SystemMessage, ToolMessage, UserMessage } from './context/items';
export type { TriggerObservation } from './context/compaction-decision';
